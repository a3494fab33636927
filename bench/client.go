package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client speaks real HTTP to the server with keep-alive connections, one per worker.
type client struct {
	base string
	http *http.Client
}

func newClient(base string, clients int) *client {
	tr := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	return &client{base: base, http: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

// do sends one request and reads the whole reply, returned when keep is set; a status
// other than want is an error.
func (c *client) do(ctx context.Context, method, path, token string, body []byte, want int, keep bool) ([]byte, error) {
	return c.doHeader(ctx, method, path, token, nil, body, want, keep)
}

// doHeader is do with extra request headers.
func (c *client) doHeader(ctx context.Context, method, path, token string, header http.Header, body []byte, want int, keep bool) ([]byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == want && !keep {
		// Read and drop the reply through a pooled buffer: the load generator runs in the
		// server's process, and its garbage would be charged to the server.
		_, err := io.Copy(io.Discard, resp.Body)
		return nil, err
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != want {
		return raw, fmt.Errorf("%s %s: status %d: %.200s", method, path, resp.StatusCode, raw)
	}
	return raw, nil
}

func (c *client) get(path, token string) op {
	return func(ctx context.Context, _, _ int) error {
		_, err := c.do(ctx, http.MethodGet, path, token, nil, http.StatusOK, false)
		return err
	}
}

// etag reads path once and returns its ETag.
func (c *client) etag(ctx context.Context, path, token string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.http.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if tag := resp.Header.Get("ETag"); resp.StatusCode == http.StatusOK && tag != "" {
		return tag, nil
	}
	return "", fmt.Errorf("GET %s: status %d, ETag %q", path, resp.StatusCode, resp.Header.Get("ETag"))
}

// revalidate is a poll of an unchanged resource: GET with If-None-Match, 304 wanted.
func (c *client) revalidate(path, token, etag string) op {
	header := http.Header{"If-None-Match": {etag}}
	return func(ctx context.Context, _, _ int) error {
		_, err := c.doHeader(ctx, http.MethodGet, path, token, header, nil, http.StatusNotModified, false)
		return err
	}
}

func (c *client) post(path, token string) op {
	return func(ctx context.Context, worker, seq int) error {
		body := fmt.Appendf(nil, `{"title":"Bench issue %d-%d","priority":"HIGH","description":"Created by the load generator."}`, worker, seq)
		_, err := c.do(ctx, http.MethodPost, path, token, body, http.StatusCreated, false)
		return err
	}
}

// accessToken posts credentials to an auth endpoint and returns the access token.
func (c *client) accessToken(ctx context.Context, path string, credentials map[string]string, want int) (string, error) {
	body, _ := json.Marshal(credentials)
	raw, err := c.do(ctx, http.MethodPost, path, "", body, want, true)
	if err != nil {
		return "", err
	}
	var tokens struct {
		AccessToken string `json:"accessToken"`
	}
	return tokens.AccessToken, json.Unmarshal(raw, &tokens)
}

// totalPages reads a list's totalPages.
func (c *client) totalPages(ctx context.Context, path, token string) (int, error) {
	raw, err := c.do(ctx, http.MethodGet, path, token, nil, http.StatusOK, true)
	if err != nil {
		return 0, err
	}
	var page struct {
		TotalPages int `json:"totalPages"`
	}
	return page.TotalPages, json.Unmarshal(raw, &page)
}

// nextCursor reads a page's nextCursor (the cursor of the page after it).
func (c *client) nextCursor(ctx context.Context, path, token string) (string, error) {
	raw, err := c.do(ctx, http.MethodGet, path, token, nil, http.StatusOK, true)
	if err != nil {
		return "", err
	}
	var page struct {
		NextCursor *string `json:"nextCursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return "", err
	}
	if page.NextCursor == nil {
		return "", fmt.Errorf("%s: no nextCursor", path)
	}
	return *page.NextCursor, nil
}
