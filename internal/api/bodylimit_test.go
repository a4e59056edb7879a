package api_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// A body over the limit is answered 413 with the error envelope, as a
// client sending it all, and reading only then, sees it: never a reset
// connection. With a length given (refused before any of it is read) or
// chunked (refused once past the limit), by REST and by JSON-RPC.
func TestOversizedBodyIs413NotAReset(t *testing.T) {
	e := newEnv(t)
	u := e.register("sender")
	big := `{"title":"t","body":"` + strings.Repeat("x", 3<<20) + `"}`
	host := strings.TrimPrefix(e.url, "http://")
	for _, c := range []struct {
		name, path string
		chunked    bool
	}{
		{"REST, with a length", "/social/rest/activities/@me/@self", false},
		{"REST, chunked", "/social/rest/activities/@me/@self", true},
		{"JSON-RPC, with a length", "/social/rpc", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			conn.SetDeadline(time.Now().Add(time.Minute))
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", c.path, host, u.token)
			var msg strings.Builder
			if c.chunked {
				fmt.Fprintf(&msg, "%sTransfer-Encoding: chunked\r\n\r\n", head)
				for rest := big; rest != ""; {
					n := min(len(rest), 64<<10)
					fmt.Fprintf(&msg, "%x\r\n%s\r\n", n, rest[:n])
					rest = rest[n:]
				}
				msg.WriteString("0\r\n\r\n")
			} else {
				fmt.Fprintf(&msg, "%sContent-Length: %d\r\n\r\n%s", head, len(big), big)
			}
			// The whole body goes before anything is read, as most
			// clients do, and over a second and a half, as over a slow
			// network: a server that answers and closes at once has
			// long closed by the end.
			for rest := msg.String(); rest != ""; {
				n := min(len(rest), 64<<10)
				if _, err := io.WriteString(conn, rest[:n]); err != nil {
					t.Fatalf("sending the body: %v (the server stopped reading it)", err)
				}
				rest = rest[n:]
				time.Sleep(30 * time.Millisecond)
			}
			res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: "POST", URL: &url.URL{Path: c.path}})
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			defer res.Body.Close()
			data, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatalf("reading the answer's body: %v", err)
			}
			var env struct {
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if res.StatusCode != http.StatusRequestEntityTooLarge || json.Unmarshal(data, &env) != nil || env.Error.Code != 413 || env.Error.Message == "" {
				t.Errorf("answer %d %s, want 413 with the error envelope", res.StatusCode, data)
			}
		})
	}
	// Nothing was posted.
	e.t = t
	if ids := e.list(e.do("GET", "/social/rest/activities/@me/@self", u.token, nil)); len(ids) != 0 {
		t.Errorf("the refused posts made activities %v", ids)
	}
}
