package main

import (
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// composeFile is the part of compose.yaml the test reads, after YAML merge keys.
type composeFile struct {
	Services map[string]composeService `yaml:"services"`
	Volumes  map[string]any            `yaml:"volumes"`
}

type composeService struct {
	Image      string            `yaml:"image"`
	Build      any               `yaml:"build"`
	PullPolicy string            `yaml:"pull_policy"`
	Command    []string          `yaml:"command"`
	Profiles   []string          `yaml:"profiles"`
	Ports      []string          `yaml:"ports"`
	Env        map[string]string `yaml:"environment"`
	EnvFile    []struct {
		Path     string `yaml:"path"`
		Required bool   `yaml:"required"`
	} `yaml:"env_file"`
	DependsOn map[string]struct {
		Condition string `yaml:"condition"`
		Required  *bool  `yaml:"required"`
	} `yaml:"depends_on"`
}

// configVariables are the TW_ variables of Config, from its env tags.
func configVariables() []string {
	var out []string
	t := reflect.TypeOf(Config{})
	for i := range t.NumField() {
		if name, _, _ := strings.Cut(t.Field(i).Tag.Get("env"), ","); strings.HasPrefix(name, "TW_") {
			out = append(out, name)
		}
	}
	return out
}

// interpolation is compose's ${NAME:-default}.
var interpolation = regexp.MustCompile(`\$\{([A-Z0-9_]+)(?::-([^}]*))?\}`)

// composeDefault resolves a value with every ${NAME:-default} at its default.
func composeDefault(v string) string {
	return interpolation.ReplaceAllStringFunc(v, func(m string) string { return interpolation.FindStringSubmatch(m)[2] })
}

// TestComposeFile: compose.yaml runs migrate, api and worker from one image built once,
// in that order after a healthy Postgres; every Taskweave container reads `.env`
// (optional) and only known TW_ variables; .env.example lists every TW_ variable; the
// published ports are variables; the MinIO service sits behind the s3 profile with the
// keys and endpoint the processes use, and api and worker wait for it only when it runs.
func TestComposeFile(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../compose.yaml")
	require.NoError(t, err)
	var c composeFile
	require.NoError(t, yaml.Unmarshal(raw, &c))
	for _, name := range []string{"postgres", "migrate", "api", "worker", "prometheus", "grafana", "minio"} {
		require.Contains(t, c.Services, name)
	}
	known := configVariables()
	taskweave := []string{"migrate", "api", "worker"}
	image := c.Services["migrate"].Image
	require.NotEmpty(t, image)
	builds := 0
	for _, name := range taskweave {
		s := c.Services[name]
		require.Equal(t, image, s.Image, "%s runs the one image", name)
		if s.Build != nil {
			builds++
		} else {
			require.Equal(t, "never", s.PullPolicy, "%s uses the image migrate built", name)
		}
		require.Equal(t, []string{name}, s.Command)
		require.Len(t, s.EnvFile, 1)
		require.Equal(t, ".env", s.EnvFile[0].Path)
		require.False(t, s.EnvFile[0].Required, "the env file is optional")
		for v := range s.Env {
			require.Contains(t, known, v, "%s sets %s, which Config does not read", name, v)
		}
		require.Equal(t, "http://minio:9000", composeDefault(s.Env["TW_S3_ENDPOINT"]))
		require.Equal(t, "disk", composeDefault(s.Env["TW_STORAGE"]))
		require.Equal(t, "true", composeDefault(s.Env["TW_S3_CREATE_BUCKET"]))
	}
	require.Equal(t, 1, builds, "one build for the three services")
	require.Equal(t, "service_healthy", c.Services["migrate"].DependsOn["postgres"].Condition)
	for _, name := range []string{"api", "worker"} {
		deps := c.Services[name].DependsOn
		require.Equal(t, "service_completed_successfully", deps["migrate"].Condition, name)
		require.Equal(t, "service_healthy", deps["minio"].Condition, name)
		require.NotNil(t, deps["minio"].Required)
		require.False(t, *deps["minio"].Required, "%s starts without the s3 profile", name)
	}

	minio := c.Services["minio"]
	require.Equal(t, []string{"s3"}, minio.Profiles)
	api := c.Services["api"]
	require.Equal(t, composeDefault(api.Env["TW_S3_ACCESS_KEY"]), composeDefault(minio.Env["MINIO_ROOT_USER"]))
	require.Equal(t, composeDefault(api.Env["TW_S3_SECRET_KEY"]), composeDefault(minio.Env["MINIO_ROOT_PASSWORD"]))
	require.GreaterOrEqual(t, len(composeDefault(minio.Env["MINIO_ROOT_PASSWORD"])), 8, "MinIO's shortest password")
	require.Contains(t, c.Volumes, "minio")

	for name, s := range c.Services {
		for _, p := range s.Ports {
			require.Regexp(t, `^\$\{[A-Z_]+:-[0-9]+\}:[0-9]+$`, p, "%s publishes %s on a fixed port", name, p)
		}
	}

	example, err := os.ReadFile("../../.env.example")
	require.NoError(t, err)
	for _, v := range known {
		require.Regexp(t, regexp.MustCompile(`(?m)^# `+v+`=`), string(example), ".env.example lacks %s", v)
	}
	listed := regexp.MustCompile(`(?m)^# (TW_[A-Z0-9_]+)=`).FindAllStringSubmatch(string(example), -1)
	for _, m := range listed {
		require.True(t, slices.Contains(known, m[1]), ".env.example lists %s, which Config does not read", m[1])
	}
}
