// Command taskweave is the one binary of Taskweave: `api`, `worker`, `migrate` and
// `all` (migrate, api and worker in one process, for a laptop).
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/pprof"
	"strings"
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

const usage = "usage: taskweave api|worker|migrate|all|backup verify|storage migrate"

// run parses the subcommand, loads the configuration and runs until ctx ends.
func run(ctx context.Context, args []string, lookup envconfig.Lookuper) error {
	cmd := strings.Join(args, " ")
	switch cmd {
	case "api", "worker", "migrate", "all", "backup verify", "storage migrate":
	default:
		return errors.New(usage)
	}
	cfg, err := loadConfig(ctx, lookup)
	if err != nil {
		return err
	}
	cfg.forCommand(cmd)
	app, err := newApp(ctx, cfg, cmd == "worker")
	if err != nil {
		return err
	}
	defer app.close()
	switch cmd {
	case "backup verify":
		return app.verifyBackup(ctx, os.Stdout)
	case "storage migrate":
		return app.startStorageMigrate(ctx, os.Stdout)
	case "migrate":
		if err := app.waitForDatabase(ctx); err != nil {
			return err
		}
		return app.migrate(ctx)
	case "api":
		return app.serveAPI(ctx, cfg.HTTPAddr, false)
	case "worker":
		workerGC(lookup)
		stop, err := cpuProfile(cfg.CPUProfile)
		if err != nil {
			return err
		}
		defer stop()
		return app.serveWorker(ctx, cfg.HTTPAddr)
	default: // all: serveAPI waits for the database, migrates and starts the workers
		return app.serveAPI(ctx, cfg.HTTPAddr, true)
	}
}

// WorkerGCPercent is a worker process's garbage collection target unless GOGC is set.
// A worker keeps little live data (a few MB: pools, River's producers) but allocates
// for every delivery it sends, so at Go's default of 100 it collected several times a
// second, a few percent of the machine's CPU in the delivery bench. At 400 its heap
// stays within some tens of MB.
const WorkerGCPercent = 400

// workerGC applies WorkerGCPercent unless GOGC is set (the runtime has applied that
// itself), and reports whether it did.
func workerGC(lookup envconfig.Lookuper) bool {
	if v, ok := lookup.Lookup("GOGC"); ok && v != "" {
		return false
	}
	debug.SetGCPercent(WorkerGCPercent)
	return true
}

// cpuProfile starts a CPU profile of the process into the file path names
// (TW_CPU_PROFILE: a diagnostic for benches, off when empty) and returns what stops and
// writes it.
func cpuProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("TW_CPU_PROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("TW_CPU_PROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		_ = f.Close()
	}, nil
}
