// Command admin is the operator's tool for what no API call may do for
// itself: naming the first admin of a deployment (after which admins
// grant roles through the API). It works on the Datastore the server
// uses, from the same environment: GOOGLE_CLOUD_PROJECT (or
// DATASTORE_PROJECT_ID), DATASTORE_NAMESPACE, and DATASTORE_EMULATOR_HOST
// for an emulator.
//
//	go run ./cmd/admin role USERNAME admin|moderator|none
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"socialstream/internal/accounts"
	"socialstream/internal/ids"
	"socialstream/internal/moderation"
	"socialstream/internal/store"
)

const usage = "usage: admin role USERNAME admin|moderator|none"

func main() {
	if err := realMain(context.Background(), os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "admin:", err)
		os.Exit(1)
	}
}

func realMain(ctx context.Context, args []string, getenv func(string) string, out io.Writer) error {
	if len(args) != 3 || args[0] != "role" {
		return errors.New(usage)
	}
	name, role := args[1], args[2]
	switch role {
	case accounts.RoleAdmin, accounts.RoleModerator:
	case "none":
		role = ""
	default:
		return fmt.Errorf("unknown role %q\n%s", role, usage)
	}
	if accounts.ValidateUsername(name) != nil {
		return fmt.Errorf("%q is not a username", name)
	}
	project := getenv("GOOGLE_CLOUD_PROJECT")
	if project == "" {
		project = getenv("DATASTORE_PROJECT_ID")
	}
	if project == "" {
		return errors.New("GOOGLE_CLOUD_PROJECT (or DATASTORE_PROJECT_ID) names the project")
	}
	client, err := store.Open(ctx, project, getenv("DATASTORE_EMULATOR_HOST"))
	if err != nil {
		return err
	}
	defer client.Close()
	db, err := store.New(client, getenv("DATASTORE_NAMESPACE"))
	if err != nil {
		return err
	}
	found, err := accounts.UserIDsByName(ctx, db, []string{name})
	if err != nil {
		return err
	}
	id, ok := found[strings.ToLower(name)]
	if !ok {
		return fmt.Errorf("no person is named %q", name)
	}
	if err := moderation.SetRole(ctx, db, ids.New(), id, role); err != nil {
		return err
	}
	if role == "" {
		role = "none"
	}
	fmt.Fprintf(out, "%s (%s) now has role %s\n", name, id, role)
	return nil
}
