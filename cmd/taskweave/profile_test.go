package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWorkerCPUProfile: TW_CPU_PROFILE empty writes nothing; set, the worker's CPU
// profile (gzipped pprof) is in the file once stopped; a path that cannot be created
// stops the worker with an error naming the variable. Not parallel: the CPU profile is
// the process's.
func TestWorkerCPUProfile(t *testing.T) {
	dir := t.TempDir()
	stop, err := cpuProfile("")
	require.NoError(t, err)
	stop()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries)

	path := filepath.Join(dir, "worker.prof")
	stop, err = cpuProfile(path)
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

	_, err = cpuProfile(filepath.Join(dir, "missing", "x.prof"))
	require.ErrorContains(t, err, "TW_CPU_PROFILE")
}
