package localstack

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

// The TLS front door: a peer of the fediverse that reaches other servers
// over https alone (GoToSocial does, for WebFinger) cannot federate with
// the local stack on plain http. FrontDoor (cmd/dev's --tls-port, and
// cmd/fedflows) listens with a certificate of its own for 127.0.0.1 and localhost, made
// anew each run and trusted by no one (the peer must be told to skip
// verification: a test on one machine alone), and hands every request
// to the API as it came, its Host kept, which signatures sign, saying
// what it terminated as proxies do (X-Forwarded-Proto: https,
// X-Forwarded-Host, X-Forwarded-For).

// selfSigned makes a certificate for loopback, valid for a day.
func selfSigned() (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: "socialstream local"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// FrontDoor serves https on addr, handing each request to api, until ctx
// is done, and returns its root.
func FrontDoor(ctx context.Context, addr, api string) (string, error) {
	target, err := url.Parse(api)
	if err != nil {
		return "", err
	}
	cert, err := selfSigned()
	if err != nil {
		return "", err
	}
	l, err := tls.Listen("tcp", addr, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		return "", err
	}
	proxy := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // as the peer signed it
		r.SetXForwarded()      // what it terminated: X-Forwarded-Proto https
	}}
	srv := &http.Server{Handler: proxy, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	go func() {
		if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the API's own listener tells of a stack that stopped
		}
	}()
	return "https://" + l.Addr().String(), nil
}
