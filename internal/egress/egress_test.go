package egress

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"142.250.80.46", true},
		{"2607:f8b0:4004:c07::64", true},
		{"127.0.0.1", false},
		{"127.1.2.3", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // the metadata server
		{"fd00:ec2::254", false},   // the metadata server, over IPv6
		{"fe80::1", false},
		{"100.64.0.1", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"::", false},
		{"224.0.0.1", false},
		{"ff02::1", false},
		{"255.255.255.255", false},
		{"192.0.2.10", false},
		{"2001:db8::1", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:8.8.8.8", true},
		{"64:ff9b::7f00:1", false}, // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"2002:a00:1::1", false},   // 6to4 of 10.0.0.1
		{"2002:808:808::1", true},  // 6to4 of 8.8.8.8
	} {
		if got := Public(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("Public(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(req)
}

// A request refused on the dialled address never reaches the server: a
// loopback server, named by address or by a name that resolves to it.
func TestRefusesWhatIsNotPublic(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer tls.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	tlsPort := tls.URL[strings.LastIndex(tls.URL, ":"):]
	c := New(Config{})
	for _, url := range []string{
		srv.URL,                       // http at all
		"https://127.0.0.1" + tlsPort, // loopback by address
		"https://localhost" + tlsPort, // loopback by name: the dialled address decides
		"https://[::1]" + tlsPort,     // IPv6 loopback
		"https://10.0.0.1" + port,     // private
		"https://169.254.169.254/",    // metadata
		"https://[fd00:ec2::254]/",    // metadata, IPv6
		"https://100.64.0.1" + port,   // shared address space
		"ftp://example.com/",          // not http at all
		"https://0.0.0.0" + tlsPort,   // unspecified, which reaches this machine
		"https://[::ffff:7f00:1]" + tlsPort,
	} {
		resp, err := get(t, c, url)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s: no error", url)
		} else if !errors.Is(err, ErrRefused) {
			t.Errorf("GET %s: %v, want ErrRefused", url, err)
		}
	}
	if hits != 0 {
		t.Errorf("%d requests reached the servers", hits)
	}
}

// With loopback allowed, http reaches loopback and nothing else.
func TestAllowLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	c := New(Config{AllowLoopback: true})
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatalf("GET %s: %v", srv.URL, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "ok" {
		t.Errorf("body %q", body)
	}
	for _, url := range []string{"http://10.0.0.1:9/", "http://192.0.2.1:9/", "http://169.254.169.254/"} {
		if resp, err := get(t, c, url); !errors.Is(err, ErrRefused) {
			if err == nil {
				resp.Body.Close()
			}
			t.Errorf("GET %s with loopback allowed: %v, want ErrRefused", url, err)
		}
	}
}

func TestNoRedirectsAndCaps(t *testing.T) {
	followed := false
	mux := http.NewServeMux()
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/target", http.StatusFound) })
	mux.HandleFunc("/target", func(w http.ResponseWriter, r *http.Request) { followed = true })
	mux.HandleFunc("/large", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100<<10)) })
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 1000)) })
	block := make(chan struct{})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-block:
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	defer close(block)
	c := New(Config{AllowLoopback: true, MaxBody: 1000, Timeout: 200 * time.Millisecond})

	resp, err := get(t, c, srv.URL+"/redirect")
	if err != nil {
		t.Fatal(err)
	}
	Drain(resp)
	if resp.StatusCode != http.StatusFound || followed {
		t.Errorf("redirect: status %d, followed %v; want the 302 itself", resp.StatusCode, followed)
	}

	resp, err = get(t, c, srv.URL+"/large")
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if !errors.Is(err, ErrTooLarge) || n != 1000 {
		t.Errorf("a large body: read %d, %v; want 1000 and ErrTooLarge", n, err)
	}
	resp, err = get(t, c, srv.URL+"/exact")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != 1000 {
		t.Errorf("a body at the cap: read %d, %v", len(b), err)
	}

	if resp, err := get(t, c, srv.URL+"/slow"); err == nil {
		resp.Body.Close()
		t.Error("a server that never answers: no error")
	}
}

// AllowHTTP lets plain http go where https goes, and no further: to a
// public address, to loopback only when that is allowed too.
func TestAllowHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	if resp, err := get(t, New(Config{AllowHTTP: true}), srv.URL); !errors.Is(err, ErrRefused) {
		if err == nil {
			resp.Body.Close()
		}
		t.Errorf("http to loopback, not allowed: %v, want ErrRefused", err)
	}
	c := New(Config{AllowHTTP: true, AllowLoopback: true})
	resp, err := get(t, c, srv.URL)
	if err != nil {
		t.Fatalf("http to loopback, allowed: %v", err)
	}
	resp.Body.Close()
	for _, url := range []string{"http://10.0.0.1:9/", "http://169.254.169.254/", "http://[fd00:ec2::254]/"} {
		if resp, err := get(t, c, url); !errors.Is(err, ErrRefused) {
			if err == nil {
				resp.Body.Close()
			}
			t.Errorf("GET %s: %v, want ErrRefused", url, err)
		}
	}
}

// Confined, the guarded clients' resolver asks no name server off this
// machine.
func TestConfinedResolver(t *testing.T) {
	if _, err := resolver.Dial(context.Background(), "udp", "192.0.2.53:53"); !errors.Is(err, ErrRefused) {
		t.Errorf("a name server off this machine: %v, want ErrRefused", err)
	}
	c, err := resolver.Dial(context.Background(), "udp", "127.0.0.1:53")
	if err != nil {
		t.Fatalf("a name server on loopback: %v", err)
	}
	c.Close()
}
