package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/sethvargo/go-envconfig"
	"github.com/stretchr/testify/require"
)

// TestWorkerCPUProfile: TW_CPU_PROFILE unset writes nothing; set, the worker's CPU
// profile (gzipped pprof) is in the file once stopped; a path that cannot be created
// stops the worker with an error naming the variable. Not parallel: the CPU profile is
// the process's.
func TestWorkerCPUProfile(t *testing.T) {
	dir := t.TempDir()
	stop, err := cpuProfile(envconfig.MapLookuper(nil))
	require.NoError(t, err)
	stop()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)

	path := filepath.Join(dir, "worker.prof")
	stop, err = cpuProfile(envconfig.MapLookuper(map[string]string{"TW_CPU_PROFILE": path}))
	require.NoError(t, err)
	sum := 0
	for i := range 1_000_000 {
		sum += i % 7
	}
	require.Positive(t, sum)
	stop()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(raw), 2)
	require.Equal(t, []byte{0x1f, 0x8b}, raw[:2], "a gzipped pprof profile")

	_, err = cpuProfile(envconfig.MapLookuper(map[string]string{"TW_CPU_PROFILE": filepath.Join(dir, "missing", "x.prof")}))
	require.ErrorContains(t, err, "TW_CPU_PROFILE")
}
