package ownership

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Property is an indexed property of an owner's entity struct.
type Property struct {
	Owner  string // the owner's import path below the module
	Struct string
	Name   string // as stored
}

func (p Property) String() string {
	return filepath.Base(p.Owner) + "." + p.Struct + "." + p.Name
}

// Unqueried returns every property of the owners' entity structs that is
// indexed (its datastore tag has no noindex) though no query under root
// filters, orders or projects by it. An indexed property costs two index entries a
// value on every write and the storage of both, so each must be there for
// a query: the rest are noindex.
//
// A query names a property as the first argument of FilterField or Order,
// or any argument of Project: a string literal, or a variable. For a variable, every literal of the
// function that could be its value counts (a range over a list of names,
// an assignment), and where the function takes the names from its caller,
// every literal its callers pass.
func Unqueried(root string, owners []string) ([]Property, error) {
	queried, err := queriedNames(root)
	if err != nil {
		return nil, err
	}
	var out []Property
	for _, o := range owners {
		files, err := parse(filepath.Join(root, o))
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			ast.Inspect(f.file, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok || !hasDatastoreTag(st) {
					return true
				}
				for _, name := range indexedNames(st) {
					if !queried[name] {
						out = append(out, Property{Owner: o, Struct: ts.Name.Name, Name: name})
					}
				}
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// indexedNames returns the stored names of a struct's indexed fields.
func indexedNames(st *ast.StructType) []string {
	var out []string
	for _, f := range st.Fields.List {
		tag := ""
		if f.Tag != nil {
			tag, _ = strconv.Unquote(f.Tag.Value)
		}
		v, _ := reflect.StructTag(tag).Lookup("datastore")
		name, opts, _ := strings.Cut(v, ",")
		if name == "-" || strings.Contains(","+opts+",", ",noindex,") {
			continue
		}
		for _, id := range f.Names {
			if !id.IsExported() {
				continue
			}
			if name != "" {
				out = append(out, name)
			} else {
				out = append(out, id.Name)
			}
		}
	}
	return out
}

var propertyName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// queriedNames returns the names of the properties queries under root
// filter or order by: those written in the query, and those a function
// that queries by a name a variable holds is handed by its callers.
func queriedNames(root string) (map[string]bool, error) {
	files, err := parse(root)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	forwarding := directNames(files, out)
	closeForwarding(files, forwarding)
	for _, f := range files {
		ast.Inspect(f.file, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok && forwarding[callName(call)] {
				for _, a := range call.Args {
					addLiterals(a, out)
				}
			}
			return true
		})
	}
	return out, nil
}

// addLiterals adds to out every string literal under n that could be a
// property's name (an order's leading "-" dropped).
func addLiterals(n ast.Node, out map[string]bool) {
	ast.Inspect(n, func(n ast.Node) bool {
		if l, ok := n.(*ast.BasicLit); ok && l.Kind == token.STRING {
			if s, err := strconv.Unquote(l.Value); err == nil && propertyName.MatchString(strings.TrimPrefix(s, "-")) {
				out[strings.TrimPrefix(s, "-")] = true
			}
		}
		return true
	})
}

// directNames adds to out the names queries write as literals, and every
// literal of a function that queries by a name a variable holds; it
// returns those of such functions that take names from their callers.
func directNames(files []file, out map[string]bool) map[string]bool {
	forwarding := map[string]bool{}
	for _, f := range files {
		for _, d := range f.file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			dynamic := false
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 || !isQueryCall(call) {
					return true
				}
				names := call.Args[:1]
				if callName(call) == "Project" {
					names = call.Args // each property it projects
				}
				for _, arg := range names {
					if lit, ok := arg.(*ast.BasicLit); ok {
						addLiterals(lit, out)
					} else {
						dynamic = true
					}
				}
				return true
			})
			if dynamic {
				addLiterals(fn.Body, out)
				if takesNames(fn) {
					forwarding[fn.Name.Name] = true
				}
			}
		}
	}
	return forwarding
}

// closeForwarding adds to forwarding every function that takes names and
// hands them on to one that forwards them, until none is left to add.
func closeForwarding(files []file, forwarding map[string]bool) {
	for grew := true; grew; {
		grew = false
		for _, f := range files {
			for _, d := range f.file.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil || forwarding[fn.Name.Name] || !takesNames(fn) {
					continue
				}
				ast.Inspect(fn.Body, func(n ast.Node) bool {
					if call, ok := n.(*ast.CallExpr); ok && forwarding[callName(call)] && !forwarding[fn.Name.Name] {
						forwarding[fn.Name.Name], grew = true, true
					}
					return true
				})
			}
		}
	}
}

// takesNames reports whether fn takes a string or a list of them.
func takesNames(fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		if t := types(p.Type); t == "string" || t == "[]string" {
			return true
		}
	}
	return false
}

// isQueryCall reports whether call is a query's FilterField, Order or
// Project (a projection reads its properties from their index).
func isQueryCall(call *ast.CallExpr) bool {
	name := callName(call)
	return name == "FilterField" || name == "Order" || name == "Project"
}

func callName(call *ast.CallExpr) string {
	switch f := call.Fun.(type) {
	case *ast.SelectorExpr:
		return f.Sel.Name
	case *ast.Ident:
		return f.Name
	}
	return ""
}

func types(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.ArrayType:
		return "[]" + types(t.Elt)
	}
	return ""
}
