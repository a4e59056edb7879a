package mastodon

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/oauth"
)

// The sign-in page an app sends a person to (GET /oauth/authorize): the
// deployment's name, the app's name and website, what each scope it asks
// for allows, in words, and two forms: sign in, or create an account
// there and then; either approves the app, which gets its code. It is
// plain HTML, with no script and nothing from another site, under a CSP
// that allows its one stylesheet alone (by its hash); it reads on a
// phone's width and is used by keyboard (labels, order, focus).

// consent is what the page shows.
type consent struct {
	Domain   string // the deployment's
	App      string
	Website  string // an http(s) address, or ""
	Scopes   []scopeWords
	Request  oauth.Request
	Error    string
	Code     string // an out-of-band code to copy
	Username string // as typed in the form that failed
	NewName  string // as typed in the sign-up form that failed
	Scope    string
	Signup   bool // whether the sign-up form failed (its error shows there)
}

// scopeWords is a scope and what it allows, said in words.
type scopeWords struct {
	Name, Words string
}

// scopeSentences say what each scope an app may ask for allows.
var scopeSentences = map[string]string{
	"read":    "Read everything in your account: your posts and timelines, notifications, lists, favourites, bookmarks, filters, and whom you follow, block and mute.",
	"write":   "Act for you: post, edit and delete posts, favourite, boost and bookmark, follow, block and mute people, and change your profile and settings.",
	"follow":  "See and change whom you follow, block and mute.",
	"profile": "See who you are: your name, picture and profile, nothing else.",
	"push":    "Send notifications to this device (Web Push).",
}

// scopeObjects name what a granular scope covers.
var scopeObjects = map[string]string{
	"accounts": "your profile and account", "blocks": "whom you block", "bookmarks": "your bookmarks",
	"conversations": "your conversations", "favourites": "your favourites", "filters": "your filters",
	"follows": "whom you follow and your follow requests", "lists": "your lists", "media": "your uploaded pictures",
	"mutes": "whom you mute", "notifications": "your notifications", "reports": "your reports",
	"search": "searches, as you", "statuses": "your posts and timelines",
}

// describeScopes says each scope in words.
func describeScopes(scopes []string) []scopeWords {
	out := make([]scopeWords, 0, len(scopes))
	for _, sc := range scopes {
		w, ok := scopeSentences[sc]
		if !ok {
			verb, object, _ := strings.Cut(sc, ":")
			what := scopeObjects[object]
			if what == "" {
				what = object
			}
			switch verb {
			case "read":
				w = "Read " + what + "."
			case "write":
				w = "Change " + what + "."
			default:
				w = sc
			}
		}
		out = append(out, scopeWords{Name: sc, Words: w})
	}
	return out
}

// webSite returns an app's website if it is an http(s) address, for a
// link; "" otherwise.
func webSite(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	return u.String()
}

// signinStyle is the page's one stylesheet, allowed by its hash.
const signinStyle = `:root{color-scheme:light dark;--fg:#1b1b1f;--bg:#f6f6f8;--card:#fff;--muted:#5b5b66;--accent:#3b4bd8;--err:#b00020;--line:#d4d4dc}
@media (prefers-color-scheme:dark){:root{--fg:#ececf1;--bg:#16161a;--card:#222228;--muted:#a6a6b2;--accent:#8c96ff;--err:#ff8a8a;--line:#3a3a44}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:30rem;margin:0 auto;padding:1.5rem 1rem 3rem}
.site{color:var(--muted);font-size:.9rem;margin:0 0 .25rem}.site strong{color:var(--fg)}
h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.1rem;margin:0 0 .75rem}
section{background:var(--card);border:1px solid var(--line);border-radius:12px;padding:1rem 1.25rem;margin:0 0 1rem}
ul{margin:.5rem 0 0;padding:0;list-style:none}li{padding:.5rem 0;border-top:1px solid var(--line)}li:first-child{border-top:0}
li b{display:block;font-size:.8rem;color:var(--muted);font-weight:600;font-family:ui-monospace,monospace}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input[type=text],input[type=password]{width:100%;padding:.6rem .7rem;font:inherit;color:inherit;background:var(--bg);border:1px solid var(--line);border-radius:8px}
input:focus-visible,button:focus-visible,a:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:1rem}
button{font:inherit;font-weight:600;padding:.6rem 1.2rem;border-radius:8px;border:1px solid var(--accent);cursor:pointer;min-height:44px}
button.primary{background:var(--accent);color:#fff}button.secondary{background:transparent;color:var(--accent)}
.error{color:var(--err);font-weight:600;margin:.5rem 0}.hint{color:var(--muted);font-size:.9rem;margin:.25rem 0 0}
a{color:var(--accent)}code{display:block;font:1.2rem ui-monospace,monospace;word-break:break-all;background:var(--bg);padding:.75rem;border-radius:8px;user-select:all}`

var styleHash = func() string {
	sum := sha256.Sum256([]byte(signinStyle))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// signinCSP is the page's content security policy: its stylesheet, and
// forms to itself, which then send the person on to redirect (an app's
// redirect URI, checked when the app registered; "" for none), as a
// browser holds a form's redirects to form-action too.
func signinCSP(redirect string) string {
	to := "'self'"
	if u, err := url.Parse(redirect); err == nil && redirect != oauth.OOB {
		switch {
		case (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
			to += " " + u.Scheme + "://" + u.Host
		case u.Scheme != "" && u.Scheme != "javascript" && u.Scheme != "data":
			to += " " + u.Scheme + ":" // an app's own scheme
		}
	}
	return "default-src 'none'; style-src " + styleHash + "; form-action " + to + "; frame-ancestors 'none'; base-uri 'none'"
}

var consentTemplate = template.Must(template.New("consent").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">
<title>{{if .App}}Sign in to {{.Domain}} · {{.App}}{{else}}Sign in to {{.Domain}}{{end}}</title>
<style>{{.Style}}</style>
</head><body><main>
<p class="site">Signing in to <strong id="domain">{{.Domain}}</strong></p>
{{if .Code}}<h1>Your authorization code</h1>
<section><p>Copy this code into {{.App}}, then close this page:</p><code id="code">{{.Code}}</code></section>
{{else if not .App}}<h1>This sign-in cannot go on</h1>
<section><p class="error" id="error" role="alert">{{.Error}}</p>
<p class="hint">Go back to the app you came from and start again. If it happens again, the app may be set up wrongly: tell its makers.</p></section>
{{else}}<h1 id="title">{{.App}} wants to use your account</h1>
<section aria-labelledby="asks">
<h2 id="asks">{{.App}} asks to</h2>
{{if .Website}}<p class="hint">{{.App}}’s website: <a id="website" href="{{.Website}}" rel="noopener noreferrer">{{.Website}}</a></p>{{end}}
<ul id="scopes">{{range .Scopes}}<li><b>{{.Name}}</b>{{.Words}}</li>{{end}}</ul>
</section>
<section aria-labelledby="signin">
<h2 id="signin">Sign in</h2>
{{if and .Error (not .Signup)}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/oauth/authorize">
{{template "fields" .}}
<label for="username">Username</label>
<input type="text" name="username" id="username" autocomplete="username" autocapitalize="none" spellcheck="false" value="{{.Username}}" required {{if not .Signup}}autofocus{{end}}>
<label for="password">Password</label>
<input type="password" name="password" id="password" autocomplete="current-password" required>
<div class="actions">
<button class="primary" type="submit" name="decision" value="approve" id="approve">Sign in and allow</button>
<button class="secondary" type="submit" name="decision" value="deny" id="deny" formnovalidate>Deny</button>
</div>
</form>
</section>
<section aria-labelledby="signup">
<h2 id="signup">New to {{.Domain}}?</h2>
<p class="hint">Create an account here, and {{.App}} may use it at once.</p>
{{if .Signup}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
<form method="post" action="/oauth/authorize">
{{template "fields" .}}
<label for="new-username">Choose a username</label>
<input type="text" name="username" id="new-username" autocomplete="username" autocapitalize="none" spellcheck="false" value="{{.NewName}}"
 pattern="[A-Za-z0-9_]{3,30}" aria-describedby="username-rules" required {{if .Signup}}autofocus{{end}}>
<p class="hint" id="username-rules">3 to 30 letters, digits or _.</p>
<label for="new-password">Choose a password</label>
<input type="password" name="password" id="new-password" autocomplete="new-password" minlength="8" aria-describedby="password-rules" required>
<p class="hint" id="password-rules">At least 8 characters.</p>
<div class="actions"><button class="primary" type="submit" name="decision" value="register" id="register">Create account and allow</button></div>
</form>
</section>{{end}}
</main></body></html>
{{define "fields"}}<input type="hidden" name="client_id" value="{{.Request.ClientID}}">
<input type="hidden" name="redirect_uri" value="{{.Request.RedirectURI}}">
<input type="hidden" name="scope" value="{{.Scope}}">
<input type="hidden" name="state" value="{{.Request.State}}">
<input type="hidden" name="code_challenge" value="{{.Request.Challenge}}">
<input type="hidden" name="code_challenge_method" value="{{.Request.Method}}">{{end}}`))

// consentPage writes the page, which no other site may frame, cache or
// be told of by a Referer.
func (s *Server) consentPage(c *gin.Context, status int, p consent) {
	p.Domain = s.domain(c)
	h := c.Writer.Header()
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", signinCSP(p.Request.RedirectURI))
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Type", "text/html; charset=utf-8")
	c.Status(status)
	page := struct {
		consent
		Style template.CSS
	}{p, template.CSS(signinStyle)}
	if err := consentTemplate.Execute(c.Writer, page); err != nil {
		s.log.ErrorContext(c.Request.Context(), "consent page", "err", err)
	}
	c.Abort()
}
