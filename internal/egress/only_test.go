package egress

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// reachesOut names what opens a connection or makes a client of its
// own, by package: types a package must not build (a value of them,
// not a field that holds one it is given), and functions and variables
// it must not use, outside this one.
var reachesOut = map[string]struct{ built, used map[string]bool }{
	"net/http": {built: map[string]bool{"Client": true, "Transport": true},
		used: map[string]bool{"DefaultClient": true, "DefaultTransport": true, "Get": true, "Head": true, "Post": true, "PostForm": true}},
	"net": {built: map[string]bool{"Dialer": true},
		used: map[string]bool{"Dial": true, "DialTimeout": true, "DialTCP": true, "DialUDP": true, "DialIP": true, "DialUnix": true}},
}

// Every request the deployed service makes to an address leaves through
// this package's client, beneath which confinement sits (ConfineToLoopback):
// so the tests that name private and metadata addresses (here, in the
// API's tests) cannot send a packet off the machine even if the guard
// broke, whichever package asked. No other package the service's binary
// holds makes a client, a transport or a dialer of its own.
func TestOnlyThisPackageReachesOut(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}", "socialstream/cmd/server").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, rest, _ := strings.Cut(line, "\t")
		dir, files, _ := strings.Cut(rest, "\t")
		if !strings.HasPrefix(path, "socialstream/") || path == "socialstream/internal/egress" {
			continue
		}
		for _, f := range strings.Fields(files) {
			for _, use := range uses(t, filepath.Join(dir, f)) {
				t.Errorf("%s: %s reaches out past the guarded client", path, use)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d files of the service: the listing is wrong", checked)
	}
}

// A package that builds its own client is found.
func TestUsesFindsAClientOfItsOwn(t *testing.T) {
	got := uses(t, filepath.Join("testdata", "ownclient.go.txt"))
	if strings.Join(got, ",") != "http.Client at 9:8,http.DefaultClient at 10:6,net.Dialer at 11:7,http.Transport at 12:10" {
		t.Errorf("uses = %v", got)
	}
}

// uses returns where the Go file at name uses one of reachesOut's names.
func uses(t *testing.T, name string) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	local := imports(f)
	var found []string
	report := func(e ast.Expr) {
		pos := fset.Position(e.Pos())
		found = append(found, fmt.Sprintf("%s at %d:%d", types.ExprString(e), pos.Line, pos.Column))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit: // http.Client{...}
			if p, name, ok := named(local, n.Type); ok && reachesOut[p].built[name] {
				report(n.Type)
			}
		case *ast.CallExpr: // new(http.Client)
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "new" && len(n.Args) == 1 {
				if p, name, ok := named(local, n.Args[0]); ok && reachesOut[p].built[name] {
					report(n.Args[0])
				}
			}
		case *ast.SelectorExpr: // http.DefaultClient, net.Dial
			if p, name, ok := named(local, n); ok && reachesOut[p].used[name] {
				report(n)
			}
		}
		return true
	})
	return found
}

// imports maps the name a Go file gives each of its imports to the
// import's path.
func imports(f *ast.File) map[string]string {
	local := map[string]string{}
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		n := p[strings.LastIndex(p, "/")+1:]
		if imp.Name != nil {
			n = imp.Name.Name
		}
		local[n] = p
	}
	return local
}

// named returns the import path and name e names, if e is pkg.Name of
// one of local's imports.
func named(local map[string]string, e ast.Expr) (string, string, bool) {
	sel, ok := e.(*ast.SelectorExpr)
	if !ok {
		return "", "", false
	}
	id, ok := sel.X.(*ast.Ident)
	if !ok || local[id.Name] == "" {
		return "", "", false
	}
	return local[id.Name], sel.Sel.Name, true
}
