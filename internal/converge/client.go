package converge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// client calls the API over HTTP.
type client struct {
	base string
	http *http.Client
}

// reply is an answer: its status and decoded JSON body.
type reply struct {
	status int
	body   map[string]any
}

// call sends one request. A transport error (no answer) is an error;
// every answer, whatever its status, is a reply.
func (c *client) call(ctx context.Context, method, path, token string, body any) (reply, error) {
	if body == nil {
		return c.send(ctx, method, path, token, nil, "")
	}
	b, err := json.Marshal(body)
	if err != nil {
		return reply{}, err
	}
	return c.send(ctx, method, path, token, bytes.NewReader(b), "application/json")
}

// send sends one request with a body of type kind (none when body is
// nil) and decodes the answer.
func (c *client) send(ctx context.Context, method, path, token string, body io.Reader, kind string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return reply{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", kind)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &r.body); err != nil {
			return r, fmt.Errorf("%s %s: %d answer is not a JSON object: %.200s", method, path, resp.StatusCode, data)
		}
	}
	return r, nil
}

// rpcCall sends one JSON-RPC call, its token on the URL as osapi sends
// it, and answers as a REST call would: an error in the call's slot is
// its code and error object, a result is 200 and the result.
func (c *client) rpcCall(ctx context.Context, method, token string, params any) (reply, error) {
	rep, err := c.call(ctx, http.MethodPost, "/social/rpc?st="+url.QueryEscape(token), "", map[string]any{"method": method, "id": method, "params": params})
	if err != nil || rep.status != http.StatusOK {
		return rep, err
	}
	if e, ok := rep.body["error"].(map[string]any); ok {
		code, _ := e["code"].(float64)
		return reply{status: int(code), body: map[string]any{"error": e}}, nil
	}
	result, _ := rep.body["result"].(map[string]any)
	return reply{status: http.StatusOK, body: result}, nil
}

// read sends a read until it is answered with something other than a
// transient 503 (the fault layers make reads fail too), for up to a
// minute.
func (c *client) read(ctx context.Context, path, token string) (reply, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		r, err := c.call(ctx, http.MethodGet, path, token, nil)
		if err == nil && r.status != http.StatusServiceUnavailable {
			return r, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = fmt.Errorf("GET %s: still 503 after a minute", path)
			}
			return r, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// list reads every page of a collection and returns its items.
func (c *client) list(ctx context.Context, path, token string) ([]map[string]any, error) {
	var out []map[string]any
	cursor := ""
	for page := 0; page < 1000; page++ {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		p := path + sep + "count=100"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		r, err := c.read(ctx, p, token)
		if err != nil {
			return nil, err
		}
		if r.status != http.StatusOK {
			return nil, fmt.Errorf("GET %s: %d %v", p, r.status, r.body)
		}
		items, _ := r.body["list"].([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				out = append(out, m)
			}
		}
		cursor, _ = r.body["nextCursor"].(string)
		if cursor == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("GET %s: more than 1000 pages", path)
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) int64 {
	f, _ := m[k].(float64)
	return int64(f)
}

func entry(r reply) map[string]any {
	e, _ := r.body["entry"].(map[string]any)
	return e
}

// upload sends an image's bytes, as a client uploading a picture does.
func (c *client) upload(ctx context.Context, token string, data []byte, alt string) (reply, error) {
	return c.send(ctx, http.MethodPost, "/social/rest/mediaItems/@me/@self?description="+url.QueryEscape(alt), token, bytes.NewReader(data), "image/png")
}

// fetch reads a picture's link with no token, as an img element does,
// and returns its status and type.
func (c *client) fetch(ctx context.Context, link string) (int, string, error) {
	return c.fetchAccepting(ctx, link, "")
}

// fetchAccepting is fetch with an Accept header ("" for none).
func (c *client) fetchAccepting(ctx context.Context, link, accept string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return 0, "", err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Content-Type"), err
}
