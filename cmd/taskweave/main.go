// Command taskweave is the one binary of Taskweave: `api`, `worker`, `migrate` and
// `all` (migrate, api and worker in one process, for a laptop).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/sethvargo/go-envconfig"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], envconfig.OsLookuper())
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "taskweave:", err)
		os.Exit(1)
	}
}

const usage = "usage: taskweave api|worker|migrate|all"

// run parses the subcommand, loads the configuration and runs until ctx ends.
func run(ctx context.Context, args []string, lookup envconfig.Lookuper) error {
	if len(args) != 1 {
		return errors.New(usage)
	}
	cmd := args[0]
	switch cmd {
	case "api", "worker", "migrate", "all":
	default:
		return errors.New(usage)
	}
	cfg, err := loadConfig(ctx, lookup)
	if err != nil {
		return err
	}
	app, err := newApp(ctx, cfg, cmd == "worker")
	if err != nil {
		return err
	}
	defer app.close()
	switch cmd {
	case "migrate":
		return app.migrate(ctx)
	case "api":
		return app.serveAPI(ctx, addrOr(cfg.HTTPAddr, ":8080"), false)
	case "worker":
		return app.serveWorker(ctx, addrOr(cfg.HTTPAddr, ":8081"))
	default:
		if err := app.migrate(ctx); err != nil {
			return err
		}
		return app.serveAPI(ctx, addrOr(cfg.HTTPAddr, ":8080"), true)
	}
}

func addrOr(addr, def string) string {
	if addr == "" {
		return def
	}
	return addr
}
