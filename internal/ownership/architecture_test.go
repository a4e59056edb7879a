package ownership_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"socialstream/internal/testenv"
)

// The house's shape, kept by a test so that the next drift fails one:
// services are built by their constructors alone (a dependency set after
// construction hides a cycle the import graph does not show), a face
// neither reads the store nor decides a rule (the domain reads the facts
// and asks the policy; a face renders what it answers), no face builds
// another (package app builds them side by side), and no file is a
// grab-bag.
func TestArchitecture(t *testing.T) {
	root, err := testenv.RepoFile("")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		if base := strings.TrimSuffix(strings.TrimSuffix(d.Name(), ".go"), "_test"); base == "misc" || base == "more" {
			t.Errorf("%s: a grab-bag's name; name a file for what it holds", rel)
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, imp := range forbidden(rel, f) {
			t.Errorf("%s: a face imports %s; ask the domain, which reads the facts and asks the policy", rel, imp)
		}
		for _, c := range builds(rel, f) {
			t.Errorf("%s: a face builds %s; package app builds the faces and the jobs' routes side by side", rel, c)
		}
		for _, s := range setters(f) {
			t.Errorf("%s: %s sets a dependency after construction; give it to the constructor, or make the call a job", rel, s)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// faces are the packages that answer the outside: they turn requests
// into domain operations and answers into each face's shape.
var faces = []string{"internal/api", "internal/mastodon", "internal/activitypub", "internal/web"}

// forbidden returns the imports of f, a file at rel, that its package
// may not make: a face's of the store or the policy.
func forbidden(rel string, f *ast.File) []string {
	if !slices.Contains(faces, filepath.ToSlash(filepath.Dir(rel))) {
		return nil
	}
	var out []string
	for _, imp := range f.Imports {
		switch p := strings.Trim(imp.Path.Value, `"`); p {
		case "socialstream/internal/store", "socialstream/internal/policy":
			out = append(out, p)
		}
	}
	return out
}

// built are the constructors of the faces and of the jobs' routes,
// which package app calls, side by side.
var built = map[string]bool{"mastodon.New": true, "activitypub.New": true, "api.New": true, "web.New": true, "jobs.New": true}

// builds returns the calls in f, a file at rel, of a face's package,
// to another face's constructor or the jobs' routes'.
func builds(rel string, f *ast.File) []string {
	if !slices.Contains(faces, filepath.ToSlash(filepath.Dir(rel))) {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok && built[x.Name+"."+sel.Sel.Name] {
				out = append(out, x.Name+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return out
}

// The building rule finds a face's call of another face's constructor,
// and holds faces alone to it.
func TestBuildsFound(t *testing.T) {
	src := `package p
func New() *Server {
	m := mastodon.New(mastodon.Deps{})
	_ = ids.New()
	_, _ = jobs.New(jobs.Runners{}, nil)
	return &Server{m: m}
}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := builds("internal/api/p.go", f); !slices.Equal(got, []string{"mastodon.New", "jobs.New"}) {
		t.Errorf("a face's constructions found: %v", got)
	}
	if got := builds("internal/app/p.go", f); got != nil {
		t.Errorf("app's found: %v, want none", got)
	}
}

// The import rule holds faces alone to it, and finds their imports of
// the store and the policy.
func TestForbiddenFound(t *testing.T) {
	src := `package p
import (
	"context"
	"socialstream/internal/store"
	pol "socialstream/internal/policy"
	"socialstream/internal/accounts"
)
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	got := forbidden("internal/mastodon/p.go", f)
	if want := []string{"socialstream/internal/store", "socialstream/internal/policy"}; !slices.Equal(got, want) {
		t.Errorf("a face's imports found: %v, want %v", got, want)
	}
	if got := forbidden("internal/graph/p.go", f); got != nil {
		t.Errorf("a service's imports found: %v, want none", got)
	}
}

// The setter rule finds a setter of a dependency, and not a domain
// operation named Set or a setter of a plain value.
func TestSettersFound(t *testing.T) {
	src := `package p
type Service struct{}
type Server struct{}
func (s *Service) SetPublisher(p Publisher) {}
func (s *Server) SetRender(r other.Render) {}
func (s *Service) SetLocked(ctx context.Context, user string, locked bool) error { return nil }
func (s *Server) SetTarget(target string) {}
func (s *Service) SetWindow(d time.Duration) {}
func (s *Cache) SetPublisher(p Publisher) {}
func (s Service) SetGraph(g *Graph) {}
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := setters(f)
	want := []string{"Service.SetPublisher", "Server.SetRender", "Service.SetGraph"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("setters found: %v, want %v", got, want)
	}
}

// setters returns the methods of f's services (types named Service or
// Server) that set a dependency: named Set…, taking one value that is
// neither a basic type nor a duration.
func setters(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv == nil || len(fn.Recv.List) != 1 || !strings.HasPrefix(fn.Name.Name, "Set") {
			continue
		}
		recv := fn.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		id, ok := recv.(*ast.Ident)
		if !ok || (id.Name != "Service" && id.Name != "Server") {
			continue
		}
		params := fn.Type.Params.List
		if len(params) != 1 || len(params[0].Names) > 1 || plain(params[0].Type) {
			continue
		}
		out = append(out, id.Name+"."+fn.Name.Name)
	}
	return out
}

// plain reports whether a parameter's type is a value, not a
// dependency: a basic type, or a duration.
func plain(e ast.Expr) bool {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string", "bool", "int", "int32", "int64", "uint", "uint32", "uint64", "float64", "byte", "rune":
			return true
		}
	case *ast.SelectorExpr:
		if x, ok := t.X.(*ast.Ident); ok && x.Name == "time" && t.Sel.Name == "Duration" {
			return true
		}
	}
	return false
}
