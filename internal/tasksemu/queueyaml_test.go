package tasksemu

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	appqueue "socialstream/internal/queue"
)

func TestParseRepoQueueYAML(t *testing.T) {
	data, err := os.ReadFile("../../queue.yaml")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := ParseQueueYAML(data)
	if err != nil {
		t.Fatal(err)
	}
	// Every queue gives up after appqueue.RetryLimits (so a job's handler
	// knows its last attempt), and has no age limit (with both, Cloud
	// Tasks retries until both are reached).
	got := map[string]bool{}
	for _, q := range qs {
		got[q.Name] = true
		if q.Rate <= 0 || q.Retry.MaxBackoff <= 0 {
			t.Errorf("queue %s: want a rate and a backoff, got %+v", q.Name, q)
		}
		want, ok := appqueue.RetryLimits[q.Name]
		if !ok || q.Retry.RetryLimit != want || q.Retry.AgeLimit != 0 {
			t.Errorf("queue %s: retry limit %d, age limit %v; want %d (appqueue.RetryLimits) and none", q.Name, q.Retry.RetryLimit, q.Retry.AgeLimit, want)
		}
	}
	for name := range appqueue.RetryLimits {
		if !got[name] {
			t.Errorf("queue.yaml has no %q queue", name)
		}
	}
}

func TestParseQueueYAML(t *testing.T) {
	got, err := ParseQueueYAML([]byte(`
queue:
- name: a
  rate: 30/m
  bucket_size: 3
  max_concurrent_requests: 4
  retry_parameters:
    task_retry_limit: 7
    task_age_limit: 2h
    min_backoff_seconds: 0.25
    max_backoff_seconds: 10
    max_doublings: 2
- name: b
  rate: 5/s
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []QueueConfig{
		{Name: "a", Rate: 0.5, BucketSize: 3, MaxConcurrent: 4, Retry: RetryConfig{RetryLimit: 7, AgeLimit: 2 * time.Hour, MinBackoff: 250 * time.Millisecond, MaxBackoff: 10 * time.Second, MaxDoublings: 2}},
		{Name: "b", Rate: 5, BucketSize: defaultBucketSize, MaxConcurrent: defaultMaxConcurrent, Retry: RetryConfig{RetryLimit: -1, MinBackoff: defaultMinBackoff, MaxBackoff: defaultMaxBackoff, MaxDoublings: defaultMaxDoublings}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestParseQueueYAMLErrors(t *testing.T) {
	for name, src := range map[string]string{
		"no queues":     "queue: []",
		"no name":       "queue:\n- rate: 1/s",
		"bad rate":      "queue:\n- name: a\n  rate: fast",
		"zero rate":     "queue:\n- name: a\n  rate: 0/s",
		"duplicate":     "queue:\n- name: a\n  rate: 1/s\n- name: a\n  rate: 1/s",
		"unknown field": "queue:\n- name: a\n  rate: 1/s\n  colour: red",
		"pull queue":    "queue:\n- name: a\n  mode: pull",
		"backoff order": "queue:\n- name: a\n  rate: 1/s\n  retry_parameters:\n    min_backoff_seconds: 10\n    max_backoff_seconds: 1",
		"bad age":       "queue:\n- name: a\n  rate: 1/s\n  retry_parameters:\n    task_age_limit: soon",
		"zero bucket":   "queue:\n- name: a\n  rate: 1/s\n  bucket_size: 0",
	} {
		if _, err := ParseQueueYAML([]byte(src)); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestBackoff(t *testing.T) {
	// The example of the Cloud Tasks documentation: min 10s, max 300s,
	// 3 doublings: 10, 20, 40, 80, 160, 240, 300, 300.
	r := RetryConfig{MinBackoff: 10 * time.Second, MaxBackoff: 300 * time.Second, MaxDoublings: 3}
	want := []time.Duration{10, 20, 40, 80, 160, 240, 300, 300}
	for i, w := range want {
		if got := r.Backoff(i + 1); got != w*time.Second {
			t.Errorf("Backoff(%d) = %v, want %v", i+1, got, w*time.Second)
		}
	}
	huge := RetryConfig{MinBackoff: time.Second, MaxBackoff: time.Hour, MaxDoublings: 200}
	if got := huge.Backoff(150); got != time.Hour {
		t.Errorf("Backoff with many doublings = %v, want the cap", got)
	}
}
