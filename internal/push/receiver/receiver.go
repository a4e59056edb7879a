// Package receiver is a push service and its devices, for the tests, the
// bill and the convergence checker: a server on loopback that takes Web
// Push messages as a push service does and checks each as a device's
// browser would, written from the RFCs
// alone and sharing nothing with the sending side: the VAPID JWT (RFC
// 8292: ES256, signed by the key the Authorization header names, which
// must be the instance's; aud the endpoint's origin; exp within a day)
// and the message's encryption (RFC 8291: aes128gcm, decrypted with the
// device's private key and auth secret).
package receiver

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Device is a browser's push subscription: its key pair and auth secret.
type Device struct {
	priv *ecdh.PrivateKey
	auth []byte
	// Endpoint is where its push service takes its messages.
	Endpoint string
	path     string
}

// P256dh is the device's public key, base64url, as apps send it.
func (d *Device) P256dh() string {
	return base64.RawURLEncoding.EncodeToString(d.priv.PublicKey().Bytes())
}

// Auth is the device's auth secret, base64url.
func (d *Device) Auth() string { return base64.RawURLEncoding.EncodeToString(d.auth) }

// Message is one message a device received, checked and decrypted.
type Message struct {
	Device  *Device
	Headers http.Header
	// Plain is the decrypted payload.
	Plain []byte
	// Claims are the VAPID JWT's.
	Claims map[string]any
}

// JSON decodes the payload.
func (m Message) JSON() (map[string]any, error) {
	var v map[string]any
	return v, json.Unmarshal(m.Plain, &v)
}

// Service is the push service.
type Service struct {
	srv *httptest.Server

	mu sync.Mutex
	// serverKey is the VAPID public key (base64url) every message must
	// be signed with: the instance's (Expect).
	serverKey string
	devices   map[string]*Device
	status    map[string]int
	got       []Message
	errs      []error
	n         int
}

// New starts a push service on loopback; Close stops it.
func New() *Service {
	s := &Service{devices: map[string]*Device{}, status: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Close stops the service.
func (s *Service) Close() { s.srv.Close() }

// Expect sets the VAPID public key messages must be signed with.
func (s *Service) Expect(serverKey string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.serverKey = serverKey
}

// Device makes a device subscribed at this service.
func (s *Service) Device() *Device {
	priv, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		panic(err)
	}
	auth := make([]byte, 16)
	if _, err := rand.Read(auth); err != nil {
		panic(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	path := "/push/" + strconv.Itoa(s.n)
	d := &Device{priv: priv, auth: auth, Endpoint: s.srv.URL + path, path: path}
	s.devices[path] = d
	return d
}

// Answer has the service answer status for d's messages from now on (0:
// 201, taken).
func (s *Service) Answer(d *Device, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status[d.path] = status
}

// Messages returns the messages d received, checked and decrypted.
func (s *Service) Messages(d *Device) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.got {
		if m.Device == d {
			out = append(out, m)
		}
	}
	return out
}

// Errors returns what failed the checks: a message that did not verify
// or decrypt, or came to no device.
func (s *Service) Errors() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]error(nil), s.errs...)
}

// Posts counts every request the service had, checked or not.
func (s *Service) Posts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got) + len(s.errs)
}

func (s *Service) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 8192))
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.devices[r.URL.Path]
	if err == nil {
		if d == nil {
			err = fmt.Errorf("a message to %s, no device's", r.URL.Path)
		} else {
			var m Message
			m, err = s.check(r, d, body)
			if err == nil {
				s.got = append(s.got, m)
			}
		}
	}
	if err != nil {
		s.errs = append(s.errs, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	status := s.status[r.URL.Path]
	if status == 0 {
		status = http.StatusCreated
	}
	w.WriteHeader(status)
}

// check verifies a request as a push service and its device would.
func (s *Service) check(r *http.Request, d *Device, body []byte) (Message, error) {
	if r.Method != http.MethodPost {
		return Message{}, fmt.Errorf("method %s", r.Method)
	}
	if ce := r.Header.Get("Content-Encoding"); ce != "aes128gcm" {
		return Message{}, fmt.Errorf("Content-Encoding %q, want aes128gcm", ce)
	}
	if ttl, err := strconv.Atoi(r.Header.Get("TTL")); err != nil || ttl < 0 {
		return Message{}, fmt.Errorf("TTL %q is not a number of seconds", r.Header.Get("TTL"))
	}
	switch u := r.Header.Get("Urgency"); u {
	case "", "very-low", "low", "normal", "high":
	default:
		return Message{}, fmt.Errorf("Urgency %q", u)
	}
	if t := r.Header.Get("Topic"); len(t) > 32 || strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != "" {
		return Message{}, fmt.Errorf("Topic %q is not 32 base64url characters at most", t)
	}
	claims, err := s.vapid(r.Header.Get("Authorization"), "http://"+r.Host)
	if err != nil {
		return Message{}, err
	}
	plain, err := d.decrypt(body)
	if err != nil {
		return Message{}, err
	}
	return Message{Device: d, Headers: r.Header.Clone(), Plain: plain, Claims: claims}, nil
}

// vapid checks an Authorization header of RFC 8292's vapid scheme.
func (s *Service) vapid(header, origin string) (map[string]any, error) {
	rest, ok := strings.CutPrefix(header, "vapid ")
	if !ok {
		return nil, fmt.Errorf("Authorization %q is not vapid", header)
	}
	params := map[string]string{}
	for _, p := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		params[k] = v
	}
	if params["k"] != s.serverKey || s.serverKey == "" {
		return nil, fmt.Errorf("signed with key %q, not the instance's %q", params["k"], s.serverKey)
	}
	raw, err := base64.RawURLEncoding.DecodeString(params["k"])
	if err != nil {
		return nil, err
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), raw)
	if err != nil {
		return nil, err
	}
	parts := strings.Split(params["t"], ".")
	if len(parts) != 3 {
		return nil, errors.New("the JWT is not three parts")
	}
	var head map[string]any
	if err := decodePart(parts[0], &head); err != nil || head["alg"] != "ES256" {
		return nil, fmt.Errorf("the JWT's header %v, want ES256", head)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil || len(sig) != 64 {
		return nil, errors.New("the JWT's signature is not 64 bytes")
	}
	digest := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if !ecdsa.Verify(pub, digest[:], new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])) {
		return nil, errors.New("the JWT's signature does not verify with the instance's key")
	}
	var claims map[string]any
	if err := decodePart(parts[1], &claims); err != nil {
		return nil, err
	}
	if claims["aud"] != origin {
		return nil, fmt.Errorf("aud %v, want the endpoint's origin %s", claims["aud"], origin)
	}
	exp, _ := claims["exp"].(float64)
	if now := float64(time.Now().Unix()); exp <= now || exp > now+24*3600 {
		return nil, fmt.Errorf("exp %v is not within a day from now", claims["exp"])
	}
	if sub, _ := claims["sub"].(string); !strings.HasPrefix(sub, "mailto:") && !strings.HasPrefix(sub, "https://") {
		return nil, fmt.Errorf("sub %q is neither mailto: nor https:", sub)
	}
	return claims, nil
}

func decodePart(p string, dst any) error {
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, dst)
}

// decrypt opens an aes128gcm body (RFC 8188, with RFC 8291's keys).
func (d *Device) decrypt(body []byte) ([]byte, error) {
	if len(body) < 21 {
		return nil, errors.New("the body is shorter than its header")
	}
	salt, rs, idlen := body[:16], binary.BigEndian.Uint32(body[16:20]), int(body[20])
	if idlen != 65 || len(body) < 21+idlen {
		return nil, fmt.Errorf("keyid of %d bytes, want the sender's 65-byte key", idlen)
	}
	senderPub, err := ecdh.P256().NewPublicKey(body[21 : 21+idlen])
	if err != nil {
		return nil, err
	}
	record := body[21+idlen:]
	if uint32(len(record)) > rs || rs < 18 {
		return nil, fmt.Errorf("one record of %d bytes, record size %d", len(record), rs)
	}
	shared, err := d.priv.ECDH(senderPub)
	if err != nil {
		return nil, err
	}
	info := append(append([]byte("WebPush: info\x00"), d.priv.PublicKey().Bytes()...), senderPub.Bytes()...)
	ikm, err := hkdf.Key(sha256.New, shared, d.auth, string(info), 32)
	if err != nil {
		return nil, err
	}
	cek, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: aes128gcm\x00", 16)
	if err != nil {
		return nil, err
	}
	nonce, err := hkdf.Key(sha256.New, ikm, salt, "Content-Encoding: nonce\x00", 12)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(cek)
	if err != nil {
		return nil, err
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	plain, err := gcm.Open(nil, nonce, record, nil)
	if err != nil {
		return nil, fmt.Errorf("the message does not decrypt: %w", err)
	}
	// The last record ends in 0x02 and its padding of zeros.
	end := len(plain) - 1
	for end >= 0 && plain[end] == 0 {
		end--
	}
	if end < 0 || plain[end] != 2 {
		return nil, errors.New("the record does not end with the last record's delimiter")
	}
	return plain[:end], nil
}

// PublicKey is the device's public key as ECDSA's type, which some
// client libraries take.
func (d *Device) PublicKey() ecdsa.PublicKey {
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), d.priv.PublicKey().Bytes())
	if err != nil {
		panic(err)
	}
	return *pub
}

// Secret is the device's auth secret.
func (d *Device) Secret() []byte { return append([]byte(nil), d.auth...) }
