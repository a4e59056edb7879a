package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
)

// The flows of pictures.

// withPicture posts text with a picture as m.
func (r *fedRun) withPicture(ctx context.Context, m masto, text string) (status, error) {
	img := image.NewNRGBA(image.Rect(0, 0, 48, 32))
	for y := range 32 {
		for x := range 48 {
			img.SetNRGBA(x, y, color.NRGBA{R: uint8(x * 5), G: uint8(y * 7), B: 120, A: 255})
		}
	}
	var pic, body bytes.Buffer
	if err := png.Encode(&pic, img); err != nil {
		return status{}, err
	}
	w := multipart.NewWriter(&body)
	part, err := w.CreateFormFile("file", "fedflows.png")
	if err != nil {
		return status{}, err
	}
	part.Write(pic.Bytes())
	w.WriteField("description", "a gradient")
	w.Close()
	req, err := http.NewRequestWithContext(ctx, "POST", m.base+"/api/v2/media", &body)
	if err != nil {
		return status{}, err
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := client.Do(req)
	if err != nil {
		return status{}, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var media struct{ ID string }
	if resp.StatusCode > 299 || json.Unmarshal(raw, &media) != nil || media.ID == "" {
		return status{}, fmt.Errorf("upload as %s: %d %s", m.name, resp.StatusCode, bytes.TrimSpace(raw))
	}
	var s status
	err = m.call(ctx, "POST", "/api/v1/statuses", url.Values{"status": {text}, "media_ids[]": {media.ID}}, &s)
	return s, err
}

func (r *fedRun) pictureHere(ctx context.Context) (string, error) {
	if _, err := r.withPicture(ctx, r.amy, "a picture from here "+r.stamp); err != nil {
		return "", err
	}
	err := r.until(ctx, "the picture in their home", func() (bool, error) {
		var home []status
		err := r.a.call(ctx, "GET", "/api/v1/timelines/home", nil, &home)
		s, ok := holding(home, "a picture from here "+r.stamp)
		return ok && len(s.Media) == 1, err
	})
	return "in their home, with its picture", err
}

func (r *fedRun) pictureThere(ctx context.Context) (string, error) {
	if _, err := r.withPicture(ctx, r.b, "a picture from there "+r.stamp); err != nil {
		return "", err
	}
	var got attachment
	err := r.until(ctx, "the picture in amy's home", func() (bool, error) {
		var home []status
		err := r.amy.call(ctx, "GET", "/api/v1/timelines/home", nil, &home)
		s, ok := holding(home, "a picture from there "+r.stamp)
		if !ok || len(s.Media) != 1 {
			return false, err
		}
		got = s.Media[0]
		return true, err
	})
	if err != nil {
		return "", err
	}
	if got.RemoteURL == "" || !strings.HasPrefix(got.URL, r.amy.base) {
		return "", fmt.Errorf("the picture here: %+v", got)
	}
	err = r.until(ctx, "the picture served here", func() (bool, error) {
		resp, err := client.Get(got.URL)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "image/"), nil
	})
	return "in amy's home, its picture served from here", err
}
