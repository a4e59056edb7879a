package mastodon

import (
	"slices"
	"testing"
)

// A form's arrays of objects, numbered as Rails (and so Mastodon) reads
// them: a field met again starts the next element.
func TestIndexArrays(t *testing.T) {
	pairs, err := formPairs("title=f&keywords_attributes[][keyword]=a+b&keywords_attributes[][whole_word]=false" +
		"&keywords_attributes[][keyword]=c&context[]=home&keywords_attributes[][keyword]=d%26e&keywords_attributes[][whole_word]=true")
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{
		{"title", "f"},
		{"keywords_attributes[0][keyword]", "a b"},
		{"keywords_attributes[0][whole_word]", "false"},
		{"keywords_attributes[1][keyword]", "c"},
		{"context[]", "home"},
		{"keywords_attributes[2][keyword]", "d&e"},
		{"keywords_attributes[2][whole_word]", "true"},
	}
	if got := indexArrays(pairs); !slices.Equal(got, want) {
		t.Errorf("indexArrays:\n got %v\nwant %v", got, want)
	}
	for name, ok := range map[string]bool{"a[][b]": true, "a[]": false, "a[0][b]": false, "[][b]": false, "a[][b][c]": false, "a[][]": false} {
		if _, _, got := arrayOfObjects(name); got != ok {
			t.Errorf("arrayOfObjects(%q) = %v, want %v", name, got, ok)
		}
	}
	if _, err := formPairs("a=%zz"); err == nil {
		t.Error("a malformed escape was read")
	}
}
