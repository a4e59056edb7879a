package app

import (
	"context"
	"fmt"
	"strings"

	"cloud.google.com/go/compute/metadata"
)

// Region returns the region the instance runs in, as App Engine's
// metadata server tells it ("projects/123/regions/us-central1" gives
// "us-central1"): the location of the app's Cloud Tasks queues, which
// queue.yaml makes in the app's region.
func Region(ctx context.Context) (string, error) {
	v, err := metadata.NewClient(nil).GetWithContext(ctx, "instance/region")
	if err != nil {
		return "", fmt.Errorf("the region from the metadata server: %w", err)
	}
	v = strings.TrimSpace(v)
	i := strings.LastIndex(v, "/regions/")
	if i < 0 || i+len("/regions/") == len(v) {
		return "", fmt.Errorf("the metadata server's region %q names none", v)
	}
	return v[i+len("/regions/"):], nil
}
