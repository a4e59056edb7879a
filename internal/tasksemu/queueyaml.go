package tasksemu

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// QueueConfig is one push queue of queue.yaml.
type QueueConfig struct {
	Name          string
	Rate          float64 // dispatches per second
	BucketSize    int
	MaxConcurrent int
	Retry         RetryConfig
}

// RetryConfig is a queue's retry_parameters.
type RetryConfig struct {
	// RetryLimit is the most retries after the first attempt; -1 is no limit.
	RetryLimit int
	// AgeLimit stops retrying once the task is this old; 0 is no limit.
	AgeLimit     time.Duration
	MinBackoff   time.Duration
	MaxBackoff   time.Duration
	MaxDoublings int
}

// App Engine's defaults for what queue.yaml leaves out.
const (
	defaultBucketSize    = 5
	defaultMaxConcurrent = 1000
	defaultMinBackoff    = 100 * time.Millisecond
	defaultMaxBackoff    = time.Hour
	defaultMaxDoublings  = 16
)

type yamlFile struct {
	Queue []struct {
		Name                  string `yaml:"name"`
		Mode                  string `yaml:"mode"`
		Rate                  string `yaml:"rate"`
		BucketSize            *int   `yaml:"bucket_size"`
		MaxConcurrentRequests *int   `yaml:"max_concurrent_requests"`
		Target                string `yaml:"target"`
		RetryParameters       *struct {
			TaskRetryLimit    *int     `yaml:"task_retry_limit"`
			TaskAgeLimit      string   `yaml:"task_age_limit"`
			MinBackoffSeconds *float64 `yaml:"min_backoff_seconds"`
			MaxBackoffSeconds *float64 `yaml:"max_backoff_seconds"`
			MaxDoublings      *int     `yaml:"max_doublings"`
		} `yaml:"retry_parameters"`
	} `yaml:"queue"`
}

// ParseQueueYAML reads the push queues of an App Engine queue.yaml.
func ParseQueueYAML(data []byte) ([]QueueConfig, error) {
	var f yamlFile
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("queue.yaml: %w", err)
	}
	seen := map[string]bool{}
	var out []QueueConfig
	for i, q := range f.Queue {
		if q.Name == "" {
			return nil, fmt.Errorf("queue.yaml: queue %d has no name", i)
		}
		if seen[q.Name] {
			return nil, fmt.Errorf("queue.yaml: queue %q defined twice", q.Name)
		}
		seen[q.Name] = true
		if q.Mode != "" && q.Mode != "push" {
			return nil, fmt.Errorf("queue.yaml: queue %q: only push queues are supported", q.Name)
		}
		rate, err := parseRate(q.Rate)
		if err != nil {
			return nil, fmt.Errorf("queue.yaml: queue %q: %w", q.Name, err)
		}
		c := QueueConfig{
			Name: q.Name, Rate: rate,
			BucketSize: defaultBucketSize, MaxConcurrent: defaultMaxConcurrent,
			Retry: RetryConfig{RetryLimit: -1, MinBackoff: defaultMinBackoff, MaxBackoff: defaultMaxBackoff, MaxDoublings: defaultMaxDoublings},
		}
		if q.BucketSize != nil {
			c.BucketSize = *q.BucketSize
		}
		if q.MaxConcurrentRequests != nil {
			c.MaxConcurrent = *q.MaxConcurrentRequests
		}
		if c.BucketSize < 1 || c.MaxConcurrent < 1 {
			return nil, fmt.Errorf("queue.yaml: queue %q: bucket_size and max_concurrent_requests must be positive", q.Name)
		}
		if rp := q.RetryParameters; rp != nil {
			if rp.TaskRetryLimit != nil {
				c.Retry.RetryLimit = *rp.TaskRetryLimit
			}
			if rp.TaskAgeLimit != "" {
				if c.Retry.AgeLimit, err = parseAge(rp.TaskAgeLimit); err != nil {
					return nil, fmt.Errorf("queue.yaml: queue %q: %w", q.Name, err)
				}
			}
			if rp.MinBackoffSeconds != nil {
				c.Retry.MinBackoff = seconds(*rp.MinBackoffSeconds)
			}
			if rp.MaxBackoffSeconds != nil {
				c.Retry.MaxBackoff = seconds(*rp.MaxBackoffSeconds)
			}
			if rp.MaxDoublings != nil {
				c.Retry.MaxDoublings = *rp.MaxDoublings
			}
		}
		if c.Retry.MinBackoff <= 0 || c.Retry.MaxBackoff < c.Retry.MinBackoff || c.Retry.MaxDoublings < 0 || c.Retry.RetryLimit < -1 {
			return nil, fmt.Errorf("queue.yaml: queue %q: inconsistent retry_parameters", q.Name)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("queue.yaml: no queues")
	}
	return out, nil
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

var rateRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)/([smhd])$`)

func parseRate(s string) (float64, error) {
	m := rateRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("rate %q: want N/s, N/m, N/h or N/d", s)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	per := map[string]float64{"s": 1, "m": 60, "h": 3600, "d": 86400}[m[2]]
	r := n / per
	if r <= 0 || math.IsInf(r, 0) {
		return 0, fmt.Errorf("rate %q must be positive", s)
	}
	return r, nil
}

var ageRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)([smhd])$`)

func parseAge(s string) (time.Duration, error) {
	m := ageRE.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("task_age_limit %q: want a number and s, m, h or d", s)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[m[2]]
	return time.Duration(n * float64(unit)), nil
}

// Backoff returns how long to wait before retry number retry (1 for the
// first retry), as Cloud Tasks does: the interval starts at MinBackoff,
// doubles MaxDoublings times, then grows linearly by the last doubled
// interval, never past MaxBackoff.
func (r RetryConfig) Backoff(retry int) time.Duration {
	if retry < 1 {
		retry = 1
	}
	k := retry - 1
	// Float arithmetic: large doublings must saturate, not overflow.
	var d float64
	if k <= r.MaxDoublings {
		d = float64(r.MinBackoff) * math.Pow(2, float64(k))
	} else {
		d = float64(r.MinBackoff) * math.Pow(2, float64(r.MaxDoublings)) * float64(k-r.MaxDoublings+1)
	}
	if d > float64(r.MaxBackoff) {
		return r.MaxBackoff
	}
	return time.Duration(d)
}
