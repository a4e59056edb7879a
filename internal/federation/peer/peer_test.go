package peer

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// A request's Bytes are what its sender wrote: the request line, each
// header line, the blank line and the body, counted from what the server
// parsed.
func TestRequestBytesAreWhatWasSent(t *testing.T) {
	got := make(chan int, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- requestBytes(r, len(body))
	}))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	raw := "POST /inbox HTTP/1.1\r\n" +
		"Host: " + host + "\r\n" +
		"Content-Type: application/activity+json\r\n" +
		"Signature: keyId=\"https://elsewhere.example/users/1#main-key\",signature=\"c2lnbmVk\"\r\n" +
		"Content-Length: 13\r\n" +
		"\r\n" +
		`{"type":"X"}` + "\n"
	conn, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, raw); err != nil {
		t.Fatal(err)
	}
	if _, err := http.ReadResponse(bufio.NewReader(conn), nil); err != nil {
		t.Fatal(err)
	}
	if n := <-got; n != len(raw) {
		t.Errorf("requestBytes = %d, the request sent was %d bytes", n, len(raw))
	}
}
