package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// parseScript parses each file it is given with the parser `gcloud app
// deploy` itself uses (the Cloud SDK's yaml_parsing): app.yaml as a
// service, the rest as config files (queue, index, cron).
const parseScript = `
import sys
from googlecloudsdk.api_lib.app import yaml_parsing
for path in sys.argv[1:]:
    if path.endswith('app.yaml'):
        yaml_parsing.ServiceYamlInfo.FromFile(path)
    else:
        yaml_parsing.ConfigYamlInfo.FromFile(path)
`

// gcloudParse runs the installed Cloud SDK's parser on files, and returns
// its output and error.
func gcloudParse(t *testing.T, files ...string) (string, error) {
	t.Helper()
	info := func(format string) string {
		out, err := exec.Command("gcloud", "info", "--format=value("+format+")").Output()
		if err != nil {
			t.Fatalf("gcloud info: %v (install the Google Cloud CLI: docs/development.md)", err)
		}
		return strings.TrimSpace(string(out))
	}
	sdk, python := info("installation.sdk_root"), info("basic.python_location")
	script := filepath.Join(t.TempDir(), "parse.py")
	if err := os.WriteFile(script, []byte(parseScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{script}, files...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(sdk, "lib")+string(os.PathListSeparator)+filepath.Join(sdk, "lib", "third_party"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The deployment's files are what gcloud would take: a file it would
// refuse fails here, not at the first deploy.
func TestDeployFilesParseAsGcloudParsesThem(t *testing.T) {
	var files []string
	for _, name := range []string{"app.yaml", "queue.yaml", "index.yaml", "cron.yaml"} {
		path := filepath.Join("..", "..", name)
		if _, err := os.Stat(path); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	if out, err := gcloudParse(t, files...); err != nil {
		t.Errorf("gcloud's parser refuses the deployment's files: %v\n%s", err, out)
	}
	// And it refuses what gcloud would: an app.yaml with a field that is
	// not one.
	bad := filepath.Join(t.TempDir(), "app.yaml")
	if err := os.WriteFile(bad, []byte("runtime: go126\ninstance_class: F2\nno_such_field: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := gcloudParse(t, bad); err == nil {
		t.Errorf("gcloud's parser took an app.yaml with an unknown field:\n%s", out)
	}
	// And a cron.yaml with a field that is not one.
	badCron := filepath.Join(t.TempDir(), "cron.yaml")
	if err := os.WriteFile(badCron, []byte("cron:\n- url: /_cron/trim\n  schedule: every 1 hours\n  no_such_field: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := gcloudParse(t, badCron); err == nil {
		t.Errorf("gcloud's parser took a cron.yaml with an unknown field:\n%s", out)
	}
}
