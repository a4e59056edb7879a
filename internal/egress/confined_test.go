package egress

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/netip"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Every test binary whose tests name an address off this machine that is
// not public (private, link-local, shared, for documentation, the
// metadata server's), to see it refused, runs confined to loopback: its
// TestMain calls ConfineToLoopback, or a function that does (testenv's
// Main, stacktest's). Beneath the guard, confinement keeps such an
// address and refuses it before the socket connects
// (TestConfinementOfABrokenGuard), so none of these tests can send a
// packet off the machine even if the guard broke. A test file that names
// one in a package whose binary is not confined fails here.
func TestTestsNamingPrivateAddressesAreConfined(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		"{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .TestGoFiles \" \"}} {{join .XTestGoFiles \" \"}}",
		"socialstream/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	type pkg struct{ path, dir, files, tests string }
	var pkgs []pkg
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 4)
		pkgs = append(pkgs, pkg{f[0], f[1], f[2], f[3]})
	}
	// confining holds the functions that confine the process, as
	// "path.Name": ConfineToLoopback, and those that call one of them.
	confining := map[string]bool{"socialstream/internal/egress.ConfineToLoopback": true}
	calls := map[string][]string{}
	for _, p := range pkgs {
		for _, name := range strings.Fields(p.files) {
			f := parse(t, filepath.Join(p.dir, name))
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Body != nil {
					calls[p.path+"."+fn.Name.Name] = called(fn, imports(f), p.path)
				}
			}
		}
	}
	for grown := true; grown; {
		grown = false
		for fn, cs := range calls {
			for _, c := range cs {
				if confining[c] && !confining[fn] {
					confining[fn], grown = true, true
				}
			}
		}
	}
	naming := 0
	for _, p := range pkgs {
		var named []string
		confined := false
		for _, name := range strings.Fields(p.tests) {
			f := parse(t, filepath.Join(p.dir, name))
			if a, ok := privateAddressIn(f); ok {
				named = append(named, fmt.Sprintf("%s (%s)", name, a))
			}
			for _, d := range f.Decls {
				if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "TestMain" && fn.Recv == nil && fn.Body != nil {
					for _, c := range called(fn, imports(f), p.path) {
						confined = confined || confining[c]
					}
				}
			}
		}
		if len(named) == 0 {
			continue
		}
		naming++
		if !confined {
			t.Errorf("%s: %s name addresses off this machine, and no TestMain confines the binary to loopback (egress.ConfineToLoopback, or testenv.Main)",
				p.path, strings.Join(named, ", "))
		}
	}
	// The API's, the cards', this package's and OAuth's tests name some.
	if naming < 4 {
		t.Fatalf("%d packages' tests name an address that is not public: the listing or the search is wrong", naming)
	}
}

// A test file that names a private address, by itself or in a URL, is
// found; one that names loopback, or an address in another role (a
// network's prefix), is not.
func TestPrivateAddressIn(t *testing.T) {
	for src, want := range map[string]string{
		`package p; var u = "http://10.0.0.1:9/x"`:                "10.0.0.1",
		`package p; var u = "https://[fd00:ec2::254]/"`:           "fd00:ec2::254",
		`package p; var a = "169.254.169.254"`:                    "169.254.169.254",
		`package p; var a = "192.0.2.53:53"`:                      "192.0.2.53",
		`package p; var u = "http://127.0.0.1:8765/cb"`:           "",
		`package p; var u = "https://[::ffff:7f00:1]:443/"`:       "",
		`package p; var n = "10.0.0.0/8"; var h = "8.8.8.8"`:      "",
		`package p; var n = "example.com"; var s = "not an addr"`: "",
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if a, ok := privateAddressIn(f); ok {
			got = a.String()
		}
		if got != want {
			t.Errorf("%s: %q, want %q", src, got, want)
		}
	}
}

func parse(t *testing.T, name string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// called returns the functions fn calls by name, as "path.Name": those of
// an import (local names its imports), and those of its own package
// (path).
func called(fn *ast.FuncDecl, local map[string]string, path string) []string {
	var out []string
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if id, ok := c.Fun.(*ast.Ident); ok {
				out = append(out, path+"."+id.Name)
			} else if p, name, ok := named(local, c.Fun); ok {
				out = append(out, p+"."+name)
			}
		}
		return true
	})
	return out
}

// privateAddressIn returns the first address off this machine that is
// not public that a string of f names, by itself, with a port, or as a
// URL's host.
func privateAddressIn(f *ast.File) (netip.Addr, bool) {
	var found netip.Addr
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || found.IsValid() {
			return !found.IsValid()
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		host := s
		if u, err := url.Parse(s); err == nil && u.Host != "" {
			host = u.Hostname()
		} else if h, _, err := net.SplitHostPort(s); err == nil {
			host = h
		}
		if a, err := netip.ParseAddr(host); err == nil {
			if a = a.Unmap(); !a.IsLoopback() && !a.IsUnspecified() && !Public(a) {
				found = a
			}
		}
		return true
	})
	return found, found.IsValid()
}
