package federation

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HTTP Signatures as the fediverse signs its requests: the Cavage draft
// (draft-cavage-http-signatures-12) with rsa-sha256, which Mastodon and
// GoToSocial send and check, and its hs2019 name for the same
// RSASSA-PKCS1-v1_5 over SHA-256; a body's SHA-256 in Digest (RFC 3230),
// signed with it. Signing is Sign; checking is ReadSignature (the
// header's form, the date's window, the body's digest), then, once the
// key its keyId names is known, Signature.Verify.

// SignatureWindow is how far a signed request's Date may be from the
// receiver's clock, either way: senders sign each attempt anew, so a
// request replayed later than this is refused.
const SignatureWindow = time.Hour

// maxSignatureHeader bounds the Signature header read.
const maxSignatureHeader = 4096

// Errors of a signature.
var (
	// ErrUnsigned is a request without a signature.
	ErrUnsigned = errors.New("the request is not signed")
	// ErrBadSignature is a signature that is malformed, stale, over the
	// wrong headers or a body that is not the one sent, or that its key
	// does not check.
	ErrBadSignature = errors.New("the request's signature does not hold")
)

// signedGet and signedPost are the headers signed: what the receivers
// that matter require, and the digest of a body.
var (
	signedGet  = []string{"(request-target)", "host", "date"}
	signedPost = []string{"(request-target)", "host", "date", "digest"}
)

// Sign signs req, whose body is body (nil for none), as keyID with key:
// it sets Date (now), Digest (for a body) and Signature.
func Sign(req *http.Request, body []byte, keyID string, key *rsa.PrivateKey, now time.Time) error {
	req.Header.Set("Date", now.UTC().Format(http.TimeFormat))
	headers := signedGet
	if body != nil {
		req.Header.Set("Digest", Digest(body))
		headers = signedPost
	}
	str, err := signingString(req, headers, nil)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(str))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return err
	}
	req.Header.Set("Signature", fmt.Sprintf(`keyId=%q,algorithm="rsa-sha256",headers=%q,signature=%q`,
		keyID, strings.Join(headers, " "), base64.StdEncoding.EncodeToString(sig)))
	return nil
}

// Digest is Digest's value for body: its SHA-256.
func Digest(body []byte) string {
	sum := sha256.Sum256(body)
	return "SHA-256=" + base64.StdEncoding.EncodeToString(sum[:])
}

// Signature is a request's signature, read and checked as far as it can
// be without its key.
type Signature struct {
	// KeyID names the key that signed: an actor's key, as its publicKey
	// says.
	KeyID   string
	headers []string
	sig     []byte
	str     string // the signing string
}

// ReadSignature reads req's signature (Signature, or Authorization:
// Signature), and checks what it can without the key: that it signs the
// request's target, host and date, and for a body (body non-nil) its
// Digest; that Date (or the signature's created time) is within
// SignatureWindow of now; and that Digest is body's.
func ReadSignature(req *http.Request, body []byte, now time.Time) (*Signature, error) {
	raw := req.Header.Get("Signature")
	if raw == "" {
		if a, ok := strings.CutPrefix(req.Header.Get("Authorization"), "Signature "); ok {
			raw = a
		}
	}
	if raw == "" {
		return nil, ErrUnsigned
	}
	if len(raw) > maxSignatureHeader {
		return nil, fmt.Errorf("%w: the header is too long", ErrBadSignature)
	}
	params, err := signatureParams(raw)
	if err != nil {
		return nil, err
	}
	s := &Signature{KeyID: params["keyId"]}
	if s.KeyID == "" {
		return nil, fmt.Errorf("%w: no keyId", ErrBadSignature)
	}
	switch strings.ToLower(params["algorithm"]) {
	case "", "rsa-sha256", "hs2019":
	default:
		return nil, fmt.Errorf("%w: the algorithm %q", ErrBadSignature, params["algorithm"])
	}
	if s.sig, err = base64.StdEncoding.DecodeString(params["signature"]); err != nil || len(s.sig) == 0 {
		return nil, fmt.Errorf("%w: the signature is not base64", ErrBadSignature)
	}
	s.headers = strings.Fields(strings.ToLower(params["headers"]))
	if len(s.headers) == 0 {
		s.headers = []string{"date"} // the draft's default
	}
	if err := s.checkCovers(req, body, params, now); err != nil {
		return nil, err
	}
	if s.str, err = signingString(req, s.headers, params); err != nil {
		return nil, err
	}
	return s, nil
}

// checkCovers checks the signature covers what it must, that the time
// it was made is within the window, and that a body is the one digested.
func (s *Signature) checkCovers(req *http.Request, body []byte, params map[string]string, now time.Time) error {
	must := signedGet
	if body != nil {
		must = signedPost
	}
	for _, h := range must {
		if h == "date" && slices.Contains(s.headers, "(created)") {
			continue
		}
		if !slices.Contains(s.headers, h) {
			return fmt.Errorf("%w: it does not sign %s", ErrBadSignature, h)
		}
	}
	made, err := s.made(req, params)
	if err != nil {
		return err
	}
	if made.Before(now.Add(-SignatureWindow)) || made.After(now.Add(SignatureWindow)) {
		return fmt.Errorf("%w: made at %s, not within %v of now", ErrBadSignature, made.UTC().Format(time.RFC3339), SignatureWindow)
	}
	if exp := params["expires"]; exp != "" && slices.Contains(s.headers, "(expires)") {
		sec, err := strconv.ParseInt(exp, 10, 64)
		if err != nil || time.Unix(sec, 0).Before(now) {
			return fmt.Errorf("%w: expired", ErrBadSignature)
		}
	}
	if body != nil {
		if !digestMatches(req.Header.Values("Digest"), body) {
			return fmt.Errorf("%w: Digest is not the body's", ErrBadSignature)
		}
	}
	return nil
}

// made returns when the signature says it was made: its (created), if
// it signs one, else the Date header.
func (s *Signature) made(req *http.Request, params map[string]string) (time.Time, error) {
	if slices.Contains(s.headers, "(created)") {
		sec, err := strconv.ParseInt(params["created"], 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("%w: created is not a time", ErrBadSignature)
		}
		return time.Unix(sec, 0), nil
	}
	d, err := http.ParseTime(req.Header.Get("Date"))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: Date is not a time", ErrBadSignature)
	}
	return d, nil
}

// digestMatches reports whether one of Digest's SHA-256 values is body's
// (other algorithms are passed over).
func digestMatches(values []string, body []byte) bool {
	want := Digest(body)
	for _, v := range values {
		for _, d := range strings.Split(v, ",") {
			d = strings.TrimSpace(d)
			alg, _, ok := strings.Cut(d, "=")
			if ok && strings.EqualFold(alg, "SHA-256") && subtle.ConstantTimeCompare([]byte("SHA-256"+d[len(alg):]), []byte(want)) == 1 {
				return true
			}
		}
	}
	return false
}

// Verify checks the signature with the public key its KeyID names.
func (s *Signature) Verify(pub *rsa.PublicKey) error {
	sum := sha256.Sum256([]byte(s.str))
	if err := rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], s.sig); err != nil {
		return fmt.Errorf("%w: the key does not check it", ErrBadSignature)
	}
	return nil
}

// signatureParams reads the header's comma-separated name="value"
// pairs (created and expires may be bare numbers).
func signatureParams(raw string) (map[string]string, error) {
	out := map[string]string{}
	rest := strings.TrimSpace(raw)
	for rest != "" {
		name, after, ok := strings.Cut(rest, "=")
		if !ok {
			return nil, fmt.Errorf("%w: a parameter without a value", ErrBadSignature)
		}
		name = strings.TrimSpace(name)
		var value string
		if strings.HasPrefix(after, `"`) {
			end := strings.IndexByte(after[1:], '"')
			if end < 0 {
				return nil, fmt.Errorf("%w: an unterminated value", ErrBadSignature)
			}
			value, rest = after[1:1+end], after[2+end:]
		} else {
			value, rest, _ = strings.Cut(after, ",")
			rest = "," + rest
		}
		if _, dup := out[name]; dup || name == "" {
			return nil, fmt.Errorf("%w: the parameter %q twice or unnamed", ErrBadSignature, name)
		}
		out[name] = strings.TrimSpace(value)
		rest = strings.TrimSpace(rest)
		if rest != "" && !strings.HasPrefix(rest, ",") {
			return nil, fmt.Errorf("%w: parameters not separated by commas", ErrBadSignature)
		}
		rest = strings.TrimSpace(strings.TrimPrefix(rest, ","))
	}
	return out, nil
}

// signingString is the draft's string to sign of req over headers:
// "name: value" lines, (request-target) the method and the path with its
// query, host the request's host, (created) and (expires) the
// signature's parameters.
func signingString(req *http.Request, headers []string, params map[string]string) (string, error) {
	lines := make([]string, 0, len(headers))
	for _, h := range headers {
		var v string
		switch h {
		case "(request-target)":
			v = strings.ToLower(req.Method) + " " + req.URL.RequestURI()
		case "host":
			v = req.Host
			if v == "" {
				v = req.URL.Host
			}
		case "(created)", "(expires)":
			if params == nil || params[strings.Trim(h, "()")] == "" {
				return "", fmt.Errorf("%w: %s without its parameter", ErrBadSignature, h)
			}
			v = params[strings.Trim(h, "()")]
		default:
			vs := slices.Clone(req.Header.Values(h))
			if len(vs) == 0 {
				return "", fmt.Errorf("%w: it signs %s, which the request lacks", ErrBadSignature, h)
			}
			for i := range vs {
				vs[i] = strings.TrimSpace(vs[i])
			}
			v = strings.Join(vs, ", ")
		}
		lines = append(lines, h+": "+v)
	}
	return strings.Join(lines, "\n"), nil
}
