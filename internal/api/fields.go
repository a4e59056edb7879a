package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/gin-gonic/gin"

	"socialstream/internal/appdata"
	"socialstream/internal/derrors"
)

// MaxListItems bounds a list parameter (userId, activityId, fields).
const MaxListItems = 100

// list is a parameter OpenSocial lets a client give as one string, a
// comma-separated string or an array of strings; null is no list.
type list []string

func (l *list) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	var parts []string
	switch {
	case string(b) == "null":
		*l = nil
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		parts = []string{s}
	case len(b) > 0 && b[0] == '[':
		if err := json.Unmarshal(b, &parts); err != nil {
			return derrors.New(derrors.InvalidArgument, "a list parameter is a string, a comma-separated string or an array of strings")
		}
	default:
		return derrors.New(derrors.InvalidArgument, "a list parameter is a string, a comma-separated string or an array of strings")
	}
	out, err := splitList(parts)
	*l = out
	return err
}

// splitList splits each of parts at commas and drops empty items.
func splitList(parts []string) (list, error) {
	var out list
	for _, p := range parts {
		for _, s := range strings.Split(p, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	if len(out) > MaxListItems {
		return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("a list parameter holds at most %d items", MaxListItems))
	}
	return out, nil
}

// listFromQuery reads a comma-separated query parameter.
func listFromQuery(c *gin.Context, name string) (list, error) {
	v, ok := c.GetQueryArray(name)
	if !ok {
		return nil, nil
	}
	return splitList(v)
}

// selection checks fields (the `fields` parameter of people and
// activities) and returns the names to keep: nil for all (no fields, or
// @all). Names the objects do not have are allowed, as in OpenSocial, and
// select nothing.
func (l list) selection() (map[string]bool, error) {
	if len(l) == 0 {
		return nil, nil
	}
	keep := map[string]bool{"id": true}
	for _, f := range l {
		if f == "@all" {
			return nil, nil
		}
		if !appdata.ValidKeyName(f) { // field names follow the rule of app data keys
			return nil, derrors.New(derrors.InvalidArgument, fmt.Sprintf("fields are names of 1 to 64 of A-Z a-z 0-9 . _ -, or @all: %.80q is not", f))
		}
		keep[f] = true
	}
	return keep, nil
}

// selecting runs a read and keeps only the fields asked for, once they
// are checked.
func selecting(fields list, read func() (any, error)) (any, error) {
	keep, err := fields.selection()
	if err != nil {
		return nil, err
	}
	body, err := read()
	if err != nil {
		return nil, err
	}
	return selectFields(body, keep)
}

// selectFields keeps only the fields in keep (nil: all) of the objects in
// body: an entry's object, or each item of a collection's list.
func selectFields(body any, keep map[string]bool) (any, error) {
	if keep == nil {
		return body, nil
	}
	switch b := body.(type) {
	case entry:
		o, err := project(b.Entry, keep)
		return entry{o}, err
	case collection:
		items := reflect.ValueOf(b.List)
		if items.Kind() != reflect.Slice {
			return nil, fmt.Errorf("selectFields: list of %T", b.List)
		}
		out := make([]map[string]json.RawMessage, items.Len())
		for i := range out {
			o, err := project(items.Index(i).Interface(), keep)
			if err != nil {
				return nil, err
			}
			out[i] = o
		}
		b.List = out
		return b, nil
	}
	return nil, fmt.Errorf("selectFields: %T", body)
}

func project(v any, keep map[string]bool) (map[string]json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, err
	}
	for k := range all {
		if !keep[k] {
			delete(all, k)
		}
	}
	return all, nil
}
