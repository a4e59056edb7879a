package cards

import (
	"net/url"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	at, _ := url.Parse("https://www.example.org/a/page")
	for _, c := range []struct {
		name, html string
		want       Card
		made       bool
	}{
		{"OpenGraph over the rest", `<html><head><title>Plain</title>
			<meta name="twitter:title" content="Twitter's">
			<meta property="og:title" content="The &amp; title">
			<meta name="description" content="plain words">
			<meta property="og:description" content="  its words ">
			<meta property="og:image" content="/pics/a.png">
			<meta property="og:site_name" content="Example">
			</head><body><meta property="og:title" content="in the body"></body>`,
			Card{Title: "The & title", Description: "its words", Type: "link", ProviderName: "Example", ImageURL: "https://www.example.org/pics/a.png"}, true},
		{"Twitter's card when no OpenGraph", `<head><meta name="twitter:title" content="Tw"><meta name="twitter:image" content="https://cdn.example.net/x.jpg"><meta name="description" content="d"></head>`,
			Card{Title: "Tw", Description: "d", Type: "link", ProviderName: "example.org", ImageURL: "https://cdn.example.net/x.jpg"}, true},
		{"the title alone", `<!doctype html><title> Just a title </title><p>text`,
			Card{Title: "Just a title", Type: "link", ProviderName: "example.org"}, true},
		{"a video", `<head><meta property="og:title" content="Clip"><meta property="og:type" content="video.other"></head>`,
			Card{Title: "Clip", Type: "video", ProviderName: "example.org"}, true},
		{"an image that is no web address", `<head><meta property="og:title" content="T"><meta property="og:image" content="javascript:alert(1)"></head>`,
			Card{Title: "T", Type: "link", ProviderName: "example.org"}, true},
		{"markup in a title stays text", `<head><meta property="og:title" content="<b>bold</b>"></head>`,
			Card{Title: "<b>bold</b>", Type: "link", ProviderName: "example.org"}, true},
		{"no title", `<head><meta property="og:description" content="words"></head><body><title>late</title>`, Card{}, false},
		{"not a page", "\x00\x01 binary", Card{}, false},
	} {
		got, made := read(strings.NewReader(c.html)).card(at)
		if made != c.made {
			t.Errorf("%s: made %v", c.name, made)
			continue
		}
		if made {
			c.want.URL = at.String()
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	long := strings.Repeat("x", MaxTitle+50)
	if got, _ := read(strings.NewReader(`<meta property="og:title" content="` + long + `">`)).card(at); len(got.Title) != MaxTitle {
		t.Errorf("a long title kept %d characters, want %d", len(got.Title), MaxTitle)
	}
}

func TestFirstLink(t *testing.T) {
	for in, want := range map[string]string{
		"see https://example.org/a.":                                                  "https://example.org/a",
		"(https://example.org/wiki/Go_(language)) and more":                           "https://example.org/wiki/Go_(language)",
		"two: http://a.example/ then https://b.example/":                              "http://a.example/",
		"quoted \"https://example.org/q?x=1\"!":                                       "https://example.org/q?x=1",
		"ftp://example.org/ and mailto:a@b":                                           "",
		"@alice #tag no links":                                                        "",
		"https:// alone":                                                              "",
		"https://" + strings.Repeat("a", MaxURL) + ".example then https://ok.example": "https://ok.example",
	} {
		if got := FirstLink(in); got != want {
			t.Errorf("FirstLink(%.60q) = %q, want %q", in, got, want)
		}
	}
}
