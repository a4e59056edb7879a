package testenv

import (
	"bytes"
	"encoding/json"
	"sync"
)

// Logs is a JSON log (package logging's) that a stack's goroutines write
// at once, read back by message.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines returns the log's JSON lines whose message is msg, or every one
// if msg is empty.
func (l *Logs) Lines(msg string) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, line := range bytes.Split(l.buf.Bytes(), []byte("\n")) {
		var m map[string]any
		if json.Unmarshal(line, &m) == nil && (msg == "" || m["message"] == msg) {
			out = append(out, m)
		}
	}
	return out
}
