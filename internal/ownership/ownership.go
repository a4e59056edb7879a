// Package ownership checks, by reading the source, that every Datastore
// entity has one owner: a kind (a Kind... constant), a key (a ...Key
// function) or an entity struct (a struct with datastore tags) of a domain
// package is named by no other package. Another package that must write in
// the same commit calls a function of the owner that takes the
// transaction. Its test runs the check on the repository, so `go test`
// fails when a package reaches into another's entities.
//
// Test fixtures are exempt as test files are: a package in a directory
// named ...test is for tests alone, and Check reports any other file that
// imports one.
package ownership

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
)

// Owners returns the import paths, below the module, of the packages
// under root that own entities: those that declare an exported Kind...
// constant (a Datastore kind).
func Owners(root string) ([]string, error) {
	files, err := parse(root)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		if seen[f.dir] || len(kinds(f.file)) == 0 {
			continue
		}
		seen[f.dir] = true
		out = append(out, f.dir)
	}
	sort.Strings(out)
	return out, nil
}

// kinds returns the exported Kind... constants a file declares, with
// their values.
func kinds(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !n.IsExported() || !strings.HasPrefix(n.Name, "Kind") || i >= len(v.Values) {
					continue
				}
				if lit, ok := v.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[n.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

// Violation is one name of an owner's used outside it.
type Violation struct {
	File  string // below the root, slash-separated
	Line  int
	Owner string // the owner's import path below the module
	Name  string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s:%d: %s.%s", v.File, v.Line, path.Base(v.Owner), v.Name)
}

// Owned returns, for each owner under root (a module's directory), the
// names it owns: its Kind... constants, ...Key functions and structs with
// datastore tags.
func Owned(root string, owners []string) (map[string]map[string]bool, error) {
	out := map[string]map[string]bool{}
	for _, o := range owners {
		names := map[string]bool{}
		files, err := parse(filepath.Join(root, o))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			for _, d := range f.file.Decls {
				switch d := d.(type) {
				case *ast.FuncDecl:
					if d.Recv == nil && d.Name.IsExported() && strings.HasSuffix(d.Name.Name, "Key") {
						names[d.Name.Name] = true
					}
				case *ast.GenDecl:
					for _, spec := range d.Specs {
						switch s := spec.(type) {
						case *ast.ValueSpec:
							for _, n := range s.Names {
								if d.Tok == token.CONST && n.IsExported() && strings.HasPrefix(n.Name, "Kind") {
									names[n.Name] = true
								}
							}
						case *ast.TypeSpec:
							if st, ok := s.Type.(*ast.StructType); ok && s.Name.IsExported() && hasDatastoreTag(st) && !isValue(d.Doc, s.Doc) {
								names[s.Name.Name] = true
							}
						}
					}
				}
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("ownership: %s owns nothing", o)
		}
		out[o] = names
	}
	return out, nil
}

// ValueDirective marks, in its doc comment, a struct with datastore tags
// that other packages may name: a value they read from its owner, or
// store inside an entity of their own, but never read or write in
// Datastore as an entity of the owner's kinds.
const ValueDirective = "//ownership:value"

// isValue reports whether a doc comment carries ValueDirective.
func isValue(docs ...*ast.CommentGroup) bool {
	for _, d := range docs {
		if d == nil {
			continue
		}
		for _, c := range d.List {
			if strings.TrimSpace(c.Text) == ValueDirective {
				return true
			}
		}
	}
	return false
}

func hasDatastoreTag(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if f.Tag == nil {
			continue
		}
		tag, err := strconv.Unquote(f.Tag.Value)
		if err == nil {
			if _, ok := reflect.StructTag(tag).Lookup("datastore"); ok {
				return true
			}
		}
	}
	return false
}

// Check reads every non-test Go file under root, in module module, and
// returns each use of a name an owner owns from outside that owner.
func Check(root, module string, owners []string) ([]Violation, error) {
	owned, err := Owned(root, owners)
	if err != nil {
		return nil, err
	}
	files, err := parse(root)
	if err != nil {
		return nil, err
	}
	// The owners' kinds, as strings.
	kindValues := map[string]bool{}
	for _, f := range files {
		if owned[f.dir] != nil {
			for _, v := range kinds(f.file) {
				kindValues[v] = true
			}
		}
	}
	var out []Violation
	for _, f := range files {
		// The names under which f imports each owner.
		local := map[string]string{}
		for _, imp := range f.file.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rel, ok := strings.CutPrefix(p, module+"/"); ok && isFixtures(path.Base(rel)) {
				pos := f.fset.Position(imp.Pos())
				file, _ := filepath.Rel(root, pos.Filename)
				out = append(out, Violation{File: filepath.ToSlash(file), Line: pos.Line, Owner: rel, Name: "(test fixtures, imported outside tests)"})
			}
			rel, ok := strings.CutPrefix(p, module+"/")
			if !ok || owned[rel] == nil || rel == f.dir {
				continue
			}
			name := path.Base(rel)
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = rel
		}
		out = append(out, literalKinds(root, f, kindValues)...)
		if len(local) == 0 {
			continue
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || x.Obj != nil { // a local variable, not a package
				return true
			}
			if o, ok := local[x.Name]; ok && owned[o][sel.Sel.Name] {
				p := f.fset.Position(sel.Pos())
				rel, _ := filepath.Rel(root, p.Filename)
				out = append(out, Violation{File: filepath.ToSlash(rel), Line: p.Line, Owner: o, Name: sel.Sel.Name})
			}
			return true
		})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out, nil
}

// keyMakers are the calls whose first argument is a kind.
var keyMakers = map[string]bool{"NameKey": true, "IDKey": true, "IncompleteKey": true, "Query": true, "NewQuery": true}

// literalKinds returns each kind (one of the values of kinds) written in
// f as a string where a key or query is made, rather than named by its
// owner's Kind... constant.
func literalKinds(root string, f file, kinds map[string]bool) []Violation {
	var out []Violation
	ast.Inspect(f.file, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || !keyMakers[sel.Sel.Name] {
			return true
		}
		lit, ok := call.Args[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return true
		}
		if v, err := strconv.Unquote(lit.Value); err == nil && kinds[v] {
			p := f.fset.Position(lit.Pos())
			rel, _ := filepath.Rel(root, p.Filename)
			out = append(out, Violation{File: filepath.ToSlash(rel), Line: p.Line, Owner: f.dir, Name: lit.Value + " (a kind written as a string)"})
		}
		return true
	})
	return out
}

type file struct {
	fset *token.FileSet
	file *ast.File
	dir  string // the file's directory below root, slash-separated
}

// isFixtures reports whether a directory holds test fixtures.
func isFixtures(dir string) bool { return strings.HasSuffix(dir, "test") }

// parse parses the non-test Go files under dir, skipping testdata and
// test fixtures.
func parse(dir string) ([]file, error) {
	var out []file
	fset := token.NewFileSet()
	root := dir
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "testdata" || isFixtures(d.Name()) || (strings.HasPrefix(d.Name(), ".") && p != root) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		out = append(out, file{fset: fset, file: f, dir: filepath.ToSlash(rel)})
		return nil
	})
	return out, err
}
