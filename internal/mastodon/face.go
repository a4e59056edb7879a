package mastodon

// The Mastodon face: the Mastodon 4.x client API (docs/mastodon.md) over
// the operations and the policy the REST and JSON-RPC faces use. This
// file holds what every method shares: the sign-in and its scopes, the
// parameters as Mastodon's clients send them (query, form, multipart or
// JSON), errors as {"error": "..."}, ids, and paging by Link headers.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"socialstream/internal/accounts"
	"socialstream/internal/derrors"
	"socialstream/internal/ids"
	"socialstream/internal/paging"
)

// mreq is one Mastodon request: its caller (empty for an app's token of
// its own), grant and parameters.
type mreq struct {
	c      *gin.Context
	ctx    context.Context
	caller string
	grant  accounts.Grant
	p      mparams
}

// mhandler answers a Mastodon method: the body to write as JSON (200,
// or a status of its own: answered), or an error.
type mhandler func(m *mreq) (any, error)

// answered is a body a method answers with a status other than 200.
type answered struct {
	status int
	body   any
}

// Who a method is for.
const (
	anyone  = iota // no token needed; one, if sent, must be good
	appOnly        // a token, of an app or of a person
	person         // a person's token
)

// masto adapts a method: it signs the caller in (who says who may call,
// scope what their token must allow), meters them, reads the
// parameters and writes the answer or the error as Mastodon does.
func (s *Server) masto(who int, scope string, h mhandler) gin.HandlerFunc {
	return func(c *gin.Context) {
		m := &mreq{c: c}
		if err := s.mSignIn(c, m, who, scope); err != nil {
			s.mfail(c, err)
			return
		}
		var err error
		if m.p, err = s.readParams(c); err != nil {
			s.mfail(c, err)
			return
		}
		m.ctx = c.Request.Context()
		body, err := h(m)
		if err != nil {
			s.mfail(c, err)
			return
		}
		if a, ok := body.(answered); ok {
			c.JSON(a.status, a.body)
			return
		}
		c.JSON(http.StatusOK, body)
	}
}

// mSignIn checks the request's token as who and scope ask, and meters
// the caller (a person by their account, else by address).
func (s *Server) mSignIn(c *gin.Context, m *mreq, who int, scope string) error {
	token, ok := s.host.Token(c)
	if !ok && who == anyone {
		return s.mMeter(c, "")
	}
	err := errMNoToken
	if ok {
		m.grant, err = s.accounts.Grant(c.Request.Context(), token)
	}
	if errors.Is(err, accounts.ErrBadToken) || errors.Is(err, errMNoToken) {
		return s.host.RefuseToken(c, errMNoToken)
	}
	if err != nil {
		return err
	}
	if who == person && m.grant.User == "" {
		return errMNoUser
	}
	if !m.grant.Allows(scope) {
		return errScope
	}
	m.caller = m.grant.User
	ctx := c.Request.Context()
	if m.caller != "" {
		ctx = s.accounts.Guarded(ctx, m.caller, token)
	}
	if c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead {
		ctx = accounts.Writing(ctx)
	}
	c.Request = c.Request.WithContext(ctx)
	return s.mMeter(c, m.caller)
}

// mMeter spends a unit of the caller's quota: their account's, or, for
// no one, their address's; what a method spends more it charges. The
// headers say what is left, as Mastodon's do (ratelimit.Decision).
func (s *Server) mMeter(c *gin.Context, caller string) error { return s.host.Meter(c, caller) }

var (
	errScope    = derrors.New(derrors.PermissionDenied, "This action is outside the authorized scopes")
	errMNoToken = derrors.New(derrors.Unauthenticated, "The access token is invalid")
	errMNoUser  = derrors.New(derrors.PermissionDenied, "This method requires an authenticated user")
	errMGone    = derrors.New(derrors.NotFound, "Record not found")
)

// mfail writes err as Mastodon does: {"error": "..."}, a failed check of
// what was sent a 422.
func (s *Server) mfail(c *gin.Context, err error) {
	status, msg := derrors.Status(err)
	if errors.Is(err, s.d.NoMethod) {
		status = http.StatusMethodNotAllowed
	}
	if status == http.StatusBadRequest && !strings.HasPrefix(c.Request.URL.Path, "/oauth/") {
		status = http.StatusUnprocessableEntity
	}
	if status == http.StatusNotFound && !errors.Is(err, s.d.NoRoute) {
		// One wording for whatever is not there, as Mastodon words it: an
		// answer never tells what is hidden from what never existed.
		msg = errMGone.(*derrors.Error).Message
	}
	status = s.host.LogFailure(c, status, err)
	body := gin.H{"error": msg}
	if code, desc, ok := strings.Cut(msg, ": "); ok && strings.HasPrefix(c.Request.URL.Path, "/oauth/") && !strings.Contains(code, " ") {
		body = gin.H{"error": code, "error_description": desc}
	}
	c.AbortWithStatusJSON(status, body)
}

// mparams are a request's parameters, by name: a list is name[] (a form's
// media_ids[]=1&media_ids[]=2, or JSON's array), an object's fields
// name[field] (fields_attributes[0][name]).
type mparams map[string][]string

// maxParams bounds the values a request may send.
const maxParams = 400

// readParams reads the query and the body: a form (urlencoded or
// multipart, but for its files, which the media methods read), or a
// JSON object.
func (s *Server) readParams(c *gin.Context) (mparams, error) {
	p := mparams{}
	for k, v := range c.Request.URL.Query() {
		p[k] = v
	}
	if c.Request.Body == nil || c.Request.Method == http.MethodGet {
		return p, nil
	}
	kind, params, _ := mime.ParseMediaType(c.GetHeader("Content-Type"))
	var err error
	switch kind {
	case "application/json":
		err = s.readJSONParams(c, p)
	case "application/x-www-form-urlencoded":
		err = readFormParams(c, p)
	case "multipart/form-data":
		if params["boundary"] == "" {
			return nil, derrors.New(derrors.InvalidArgument, "the multipart form has no boundary")
		}
		if !isMastoUpload(c.Request) { // an upload streams its own form (uploadMedia)
			err = s.readMultipartParams(c, p)
		}
	}
	if err != nil {
		return nil, err
	}
	n := 0
	for _, v := range p {
		n += len(v)
	}
	if n > maxParams {
		return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("at most %d parameters", maxParams))
	}
	for k, v := range p {
		for _, x := range v {
			if err := checkString(k, x); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

func readErr(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return derrors.New(derrors.TooLarge, "the request body is too large")
	}
	return derrors.New(derrors.InvalidArgument, "could not read the request body")
}

// isMastoUpload reports whether a request is a picture's upload on the
// Mastodon face, which streams its own form.
func isMastoUpload(r *http.Request) bool {
	return r.Method == http.MethodPost && (r.URL.Path == "/api/v2/media" || r.URL.Path == "/api/v1/media")
}

// mastoCarriesPicture reports whether a request's body may be as large
// as an upload's: an upload, or a change of credentials with an avatar
// or a header.
func mastoCarriesPicture(r *http.Request) bool {
	return isMastoUpload(r) || r.Method == http.MethodPatch && r.URL.Path == "/api/v1/accounts/update_credentials"
}

// flatten writes a JSON value into p under name, as a form would send it.
func flatten(p mparams, name string, v any) {
	switch x := v.(type) {
	case nil:
	case map[string]any:
		for k, y := range x {
			flatten(p, name+"["+k+"]", y)
		}
	case []any:
		for i, y := range x {
			switch y.(type) {
			case map[string]any, []any:
				flatten(p, name+"["+strconv.Itoa(i)+"]", y)
			default:
				flatten(p, name+"[]", y)
			}
		}
	case string:
		p[name] = append(p[name], x)
	case json.Number:
		p[name] = append(p[name], x.String())
	case bool:
		p[name] = append(p[name], strconv.FormatBool(x))
	}
}

// str returns a parameter's value, "" if absent.
func (p mparams) str(name string) string {
	if v := p[name]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// has reports whether a parameter was sent.
func (p mparams) has(name string) bool { _, ok := p[name]; return ok }

// list returns a list parameter: name[] and name alike.
func (p mparams) list(name string) []string {
	out := append([]string(nil), p[name+"[]"]...)
	return append(out, p[name]...)
}

// flag returns a boolean parameter (true, 1, on; false, 0, off), def
// if absent.
func (p mparams) flag(name string, def bool) (bool, error) {
	v, ok := p[name]
	if !ok || len(v) == 0 || v[0] == "" {
		return def, nil
	}
	switch strings.ToLower(v[0]) {
	case "true", "1", "on", "t":
		return true, nil
	case "false", "0", "off", "f":
		return false, nil
	}
	return false, derrors.New(derrors.InvalidArgument, name+" must be true or false")
}

// limit returns the limit parameter: def if absent, at most most (and
// most for 0, Mastodon's "all").
func (p mparams) limit(def, most int) (int, error) {
	v := p.str("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, derrors.New(derrors.InvalidArgument, "limit must be a positive integer")
	}
	if n == 0 {
		return most, nil
	}
	return min(n, most), nil
}

// mastoPath reports whether a path is the Mastodon face's, whose errors
// are Mastodon's shape.
func mastoPath(path string) bool {
	return strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/oauth/")
}

// unsupported answers a method of Mastodon's the service has no
// operation for, with why.
func unsupported(why string) mhandler {
	return func(*mreq) (any, error) { return nil, derrors.New(derrors.InvalidArgument, why) }
}

// Mastodon's ids are strings that sort as numbers. A person's, a
// group's and a filter's ids are plain decimals already; an activity's,
// a picture's and a report's are written scattered (package ids), and
// shown here as the number they stand for.

// mid shows an id of ours as Mastodon's.
func mid(id string) string {
	if n, ok := ids.Parse(id); ok {
		return strconv.FormatInt(n, 10)
	}
	return id
}

// scattered reads a Mastodon id of an activity, a picture or a report as
// ours; "" if it is none.
func scattered(id string) string {
	if n, ok := ids.Parse(id); ok {
		return ids.Format(n)
	}
	return ""
}

// origin is the service's root, which the links of Mastodon's entities
// start with (they are absolute): the one it federates as, when it
// does; else the request's, as the connection and the trusted headers
// of the proxy in front of it say (Deps.Forwarded).
func (s *Server) origin(c *gin.Context) string {
	if s.d.Federation.On() {
		return s.d.Federation.Base()
	}
	return s.d.Forwarded.Origin(c.Request)
}

// originHost is origin's host (and port).
func (s *Server) originHost(c *gin.Context) string {
	_, h, _ := strings.Cut(s.origin(c), "://")
	return h
}

// link writes the Link header of a page: next goes below its last item
// (max_id), prev above its first (min_id); either is left out when
// empty.
func (m *mreq) link(s *Server, next, prev string) {
	u := *m.c.Request.URL
	base := s.origin(m.c) + u.Path
	var parts []string
	for _, l := range []struct{ rel, name, id string }{{"next", "max_id", next}, {"prev", "min_id", prev}} {
		if l.id == "" {
			continue
		}
		q := u.Query()
		q.Del("max_id")
		q.Del("min_id")
		q.Del("since_id")
		q.Set(l.name, l.id)
		parts = append(parts, fmt.Sprintf("<%s?%s>; rel=%q", base, q.Encode(), l.rel))
	}
	if len(parts) > 0 {
		m.c.Header("Link", strings.Join(parts, ", "))
	}
}

// cursorPage reads the paging of a list that pages by cursor (people,
// bookmarks, ...): max_id carries the sealed cursor of the page, as the
// Link of the page before gave it.
func (s *Server) cursorPage(m *mreq, def, most int) (paging.Request, error) {
	n, err := m.p.limit(def, most)
	if err != nil {
		return paging.Request{}, err
	}
	inner, err := s.cursors.Open(m.ctx, m.p.str("max_id"))
	if err != nil {
		return paging.Request{}, err
	}
	return paging.Request{Count: n, Cursor: inner}, nil
}

// nextCursor writes the Link of a page that pages by cursor.
func (s *Server) nextCursor(m *mreq, next string) error {
	if next == "" {
		return nil
	}
	sealed, err := s.cursors.Seal(m.ctx, next)
	if err != nil {
		return err
	}
	m.link(s, sealed, "")
	return nil
}

// checkString refuses a form's value that is not valid UTF-8, naming the
// parameter: a form has no escapes to check, only bytes.
func checkString(name, v string) error {
	if !utf8.ValidString(v) {
		return derrors.New(derrors.InvalidArgument, fmt.Sprintf("the parameter %s is not valid UTF-8", name))
	}
	return nil
}

// readJSONParams adds to p what a JSON object's body holds, flattened
// as a form names it.
func (s *Server) readJSONParams(c *gin.Context, p mparams) error {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return readErr(err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	if err := s.host.CheckText(data); err != nil {
		return err
	}
	var v map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return derrors.New(derrors.InvalidArgument, "the body is not a JSON object")
	}
	for k, x := range v {
		flatten(p, k, x)
	}
	return nil
}

// readFormParams adds to p an urlencoded form's values, its arrays of
// objects numbered (indexArrays).
func readFormParams(c *gin.Context, p mparams) error {
	data, err := io.ReadAll(c.Request.Body)
	if err != nil {
		return readErr(err)
	}
	pairs, err := formPairs(string(data))
	if err != nil {
		return derrors.New(derrors.InvalidArgument, "the form cannot be read")
	}
	for _, kv := range indexArrays(pairs) {
		p[kv[0]] = append(p[kv[0]], kv[1])
	}
	return nil
}

// readMultipartParams adds to p a multipart form's values, but for its
// files. Its arrays of objects are numbered by position: the form keeps
// no order across names.
func (s *Server) readMultipartParams(c *gin.Context, p mparams) error {
	if err := c.Request.ParseMultipartForm(s.d.MaxBody); err != nil {
		return derrors.New(derrors.InvalidArgument, "the multipart form cannot be read")
	}
	for k, v := range c.Request.MultipartForm.Value {
		if base, field, ok := arrayOfObjects(k); ok {
			for i, x := range v {
				name := fmt.Sprintf("%s[%d][%s]", base, i, field)
				p[name] = append(p[name], x)
			}
			continue
		}
		p[k] = append(p[k], v...)
	}
	return nil
}

// formPairs reads an urlencoded form's names and values in their order.
func formPairs(form string) ([][2]string, error) {
	var out [][2]string
	for part := range strings.SplitSeq(form, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		k, err := url.QueryUnescape(k)
		if err != nil {
			return nil, err
		}
		if v, err = url.QueryUnescape(v); err != nil {
			return nil, err
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}

// arrayOfObjects splits a name of an array of objects' field, as Rails
// forms write it (keywords_attributes[][keyword]), into the array's name
// and the field's.
func arrayOfObjects(name string) (base, field string, ok bool) {
	base, rest, ok := strings.Cut(name, "[][")
	if !ok || base == "" || len(rest) < 2 || !strings.HasSuffix(rest, "]") || strings.ContainsAny(rest[:len(rest)-1], "[]") {
		return "", "", false
	}
	return base, rest[:len(rest)-1], true
}

// indexArrays numbers the elements of the arrays of objects of a form, in
// order, as Rails reads them (and Mastodon with it): name[][field] is
// name[i][field], where a field met again in the same element starts the
// next one. Every other pair is as it was.
func indexArrays(pairs [][2]string) [][2]string {
	type array struct {
		n    int
		seen map[string]bool
	}
	arrays := map[string]*array{}
	out := make([][2]string, 0, len(pairs))
	for _, kv := range pairs {
		base, field, ok := arrayOfObjects(kv[0])
		if !ok {
			out = append(out, kv)
			continue
		}
		a := arrays[base]
		if a == nil || a.seen[field] {
			n := 0
			if a != nil {
				n = a.n + 1
			}
			a = &array{n: n, seen: map[string]bool{}}
			arrays[base] = a
		}
		a.seen[field] = true
		out = append(out, [2]string{fmt.Sprintf("%s[%d][%s]", base, a.n, field), kv[1]})
	}
	return out
}
