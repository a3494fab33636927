// Package helm tests the Helm chart in taskweave/: it renders the chart as `helm
// template` does, with its default values and with values-full.yaml, decodes every
// manifest strictly into the Kubernetes API types, and runs the KEDA trigger's query on
// a real database. It is a module of its own so Helm and k8s.io stay out of Taskweave's.
package helm

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/taskweave/taskweave/jobs"
	"github.com/taskweave/taskweave/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// rendered is one release rendered: its manifests by kind and name, and its notes.
type rendered struct {
	objects map[string]map[string]any // kind → name → typed object
	notes   string
}

// render renders the chart as `helm template` does (hooks included) with the values
// file (none: the defaults) and decodes every manifest strictly.
func render(t *testing.T, valuesFile string) rendered {
	t.Helper()
	chart, err := loader.Load("taskweave")
	require.NoError(t, err)
	vals := map[string]any{}
	if valuesFile != "" {
		vals, err = chartutil.ReadValuesFile(valuesFile)
		require.NoError(t, err)
	}
	install := action.NewInstall(&action.Configuration{})
	install.DryRun, install.ClientOnly, install.IncludeCRDs = true, true, true
	install.ReleaseName, install.Namespace = "tracker", "tw"
	install.KubeVersion = &chartutil.KubeVersion{Version: "v1.31.0", Major: "1", Minor: "31"}
	rel, err := install.Run(chart, vals)
	require.NoError(t, err)

	docs := rel.Manifest
	for _, h := range rel.Hooks {
		docs += "\n---\n" + h.Manifest
	}
	out := rendered{objects: map[string]map[string]any{}, notes: rel.Info.Notes}
	for _, doc := range strings.Split(docs, "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "\n")) == "" || onlyComments(doc) {
			continue
		}
		var head metav1.TypeMeta
		require.NoError(t, yaml.Unmarshal([]byte(doc), &head), "%s", doc)
		obj := newObject(t, head)
		require.NoError(t, yaml.UnmarshalStrict([]byte(doc), obj), "%s %s does not decode strictly:\n%s", head.APIVersion, head.Kind, doc)
		name := reflect.ValueOf(obj).Elem().FieldByName("ObjectMeta").Interface().(metav1.ObjectMeta).Name
		if out.objects[head.Kind] == nil {
			out.objects[head.Kind] = map[string]any{}
		}
		require.NotContains(t, out.objects[head.Kind], name, "two %s named %s", head.Kind, name)
		out.objects[head.Kind][name] = obj
	}
	return out
}

func onlyComments(doc string) bool {
	for _, line := range strings.Split(doc, "\n") {
		if l := strings.TrimSpace(line); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

// newObject is the typed object of a manifest's apiVersion and kind.
func newObject(t *testing.T, tm metav1.TypeMeta) any {
	t.Helper()
	switch tm.APIVersion + " " + tm.Kind {
	case "v1 ConfigMap":
		return &corev1.ConfigMap{}
	case "v1 Secret":
		return &corev1.Secret{}
	case "v1 Service":
		return &corev1.Service{}
	case "apps/v1 Deployment":
		return &appsv1.Deployment{}
	case "batch/v1 Job":
		return &batchv1.Job{}
	case "policy/v1 PodDisruptionBudget":
		return &policyv1.PodDisruptionBudget{}
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return &autoscalingv2.HorizontalPodAutoscaler{}
	case "networking.k8s.io/v1 Ingress":
		return &networkingv1.Ingress{}
	case "keda.sh/v1alpha1 ScaledObject":
		return &ScaledObject{}
	case "keda.sh/v1alpha1 TriggerAuthentication":
		return &TriggerAuthentication{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		return &ServiceMonitor{}
	}
	t.Fatalf("the chart renders %s %s, which the test does not know", tm.APIVersion, tm.Kind)
	return nil
}

func get[T any](t *testing.T, r rendered, kind, name string) *T {
	t.Helper()
	obj, ok := r.objects[kind][name]
	require.True(t, ok, "no %s %s; rendered: %v", kind, name, kinds(r))
	return obj.(*T)
}

func kinds(r rendered) []string {
	var out []string
	for k, byName := range r.objects {
		for n := range byName {
			out = append(out, k+"/"+n)
		}
	}
	slices.Sort(out)
	return out
}

// TestChartDefaults: the default values give an API Deployment with its probes,
// resources, PDB and CPU HPA, a worker Deployment with a fixed replica count, the
// migration as a pre-install/pre-upgrade hook Job, the Service, the ConfigMap and Secret
// every container reads, and one dashboard ConfigMap per Grafana dashboard; no Ingress,
// ServiceMonitor or KEDA objects.
func TestChartDefaults(t *testing.T) {
	t.Parallel()
	r := render(t, "")
	api := get[appsv1.Deployment](t, r, "Deployment", "tracker-taskweave-api")
	require.Nil(t, api.Spec.Replicas, "the HPA owns the API's replica count")
	c := api.Spec.Template.Spec.Containers[0]
	require.Equal(t, []string{"api"}, c.Args)
	require.Equal(t, "/healthz", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "/readyz", c.ReadinessProbe.HTTPGet.Path)
	require.False(t, c.Resources.Requests.Cpu().IsZero())
	require.Equal(t, "tracker-taskweave", c.EnvFrom[0].ConfigMapRef.Name)
	require.Equal(t, "tracker-taskweave", c.EnvFrom[1].SecretRef.Name)
	require.Equal(t, corev1.EnvVar{Name: "TW_DATABASE_MAX_CONNS", Value: "10"}, c.Env[0])

	worker := get[appsv1.Deployment](t, r, "Deployment", "tracker-taskweave-worker")
	require.EqualValues(t, 2, *worker.Spec.Replicas)
	require.Equal(t, []string{"worker"}, worker.Spec.Template.Spec.Containers[0].Args)
	require.Equal(t, "/readyz", worker.Spec.Template.Spec.Containers[0].ReadinessProbe.HTTPGet.Path)

	hpa := get[autoscalingv2.HorizontalPodAutoscaler](t, r, "HorizontalPodAutoscaler", "tracker-taskweave-api")
	require.Equal(t, corev1.ResourceCPU, hpa.Spec.Metrics[0].Resource.Name)
	require.Equal(t, "tracker-taskweave-api", hpa.Spec.ScaleTargetRef.Name)
	get[policyv1.PodDisruptionBudget](t, r, "PodDisruptionBudget", "tracker-taskweave-api")
	get[corev1.Service](t, r, "Service", "tracker-taskweave")

	job := get[batchv1.Job](t, r, "Job", "tracker-taskweave-migrate")
	require.Equal(t, "pre-install,pre-upgrade", job.Annotations["helm.sh/hook"])
	require.Equal(t, []string{"migrate"}, job.Spec.Template.Spec.Containers[0].Args)
	hookCM := get[corev1.ConfigMap](t, r, "ConfigMap", "tracker-taskweave-migrate")
	require.Equal(t, "pre-install,pre-upgrade", hookCM.Annotations["helm.sh/hook"])
	require.Less(t, weight(t, hookCM.Annotations), weight(t, job.Annotations), "the hook's configuration exists before its job")

	cm := get[corev1.ConfigMap](t, r, "ConfigMap", "tracker-taskweave")
	require.Equal(t, "s3", cm.Data["TW_STORAGE"])
	secret := get[corev1.Secret](t, r, "Secret", "tracker-taskweave")
	require.GreaterOrEqual(t, len(secret.StringData["TW_JWT_SECRET"]), 32, "a generated JWT secret")
	require.NotEmpty(t, secret.StringData["TW_DATABASE_URL"])

	dashboards, _ := filepath.Glob("../../dashboards/*.json")
	require.NotEmpty(t, dashboards)
	for _, path := range dashboards {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		cm := get[corev1.ConfigMap](t, r, "ConfigMap", "tracker-taskweave-dashboard-"+name)
		require.Equal(t, "1", cm.Labels["grafana_dashboard"])
		want, err := os.ReadFile(path)
		require.NoError(t, err)
		require.JSONEq(t, string(want), cm.Data[filepath.Base(path)], "the chart's copy of %s is current (cp dashboards/*.json deploy/helm/taskweave/dashboards/)", path)
	}
	for _, kind := range []string{"Ingress", "ServiceMonitor", "ScaledObject", "TriggerAuthentication"} {
		require.Empty(t, r.objects[kind], kind)
	}
	require.Contains(t, r.notes, "N APIs + M workers take N x 11 + M x 20 connections")
	require.Contains(t, r.notes, "At most 6 APIs and 2 workers: 110 connections")
}

func weight(t *testing.T, annotations map[string]string) int {
	t.Helper()
	w, err := strconv.Atoi(annotations["helm.sh/hook-weight"])
	require.NoError(t, err)
	return w
}

// TestChartFullValues: values-full.yaml sets every TW_ variable of the configuration
// struct, and each reaches the ConfigMap or the Secret (or is set by the chart itself);
// the Ingress, ServiceMonitor and KEDA objects render and decode, and the workers'
// replica count is KEDA's.
func TestChartFullValues(t *testing.T) {
	t.Parallel()
	r := render(t, "taskweave/values-full.yaml")
	cm := get[corev1.ConfigMap](t, r, "ConfigMap", "tracker-taskweave")
	secret := get[corev1.Secret](t, r, "Secret", "tracker-taskweave")
	full, err := chartutil.ReadValuesFile("taskweave/values-full.yaml")
	require.NoError(t, err)
	config, _ := full["config"].(map[string]any)
	secretValues, _ := full["secrets"].(map[string]any)["values"].(map[string]any)
	byChart := map[string]bool{"TW_ATTACHMENTS_DIR": true, "TW_DATABASE_MAX_CONNS": true}
	for _, name := range configVariables(t) {
		_, inConfig := config[name]
		_, inSecret := secretValues[name]
		require.True(t, inConfig || inSecret || byChart[name], "%s is not in values-full.yaml", name)
		if v, _ := config[name].(string); v != "" {
			require.Equal(t, v, cm.Data[name], name)
		}
		if v, _ := secretValues[name].(string); v != "" {
			require.Equal(t, v, secret.StringData[name], name)
		}
	}
	require.Equal(t, "/var/lib/taskweave/attachments", cm.Data["TW_ATTACHMENTS_DIR"])

	worker := get[appsv1.Deployment](t, r, "Deployment", "tracker-taskweave-worker")
	require.Nil(t, worker.Spec.Replicas, "KEDA owns the workers' replica count")
	require.Equal(t, "6", worker.Spec.Template.Spec.Containers[0].Env[0].Value)
	require.Equal(t, "taskweave-attachments", worker.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName)
	so := get[ScaledObject](t, r, "ScaledObject", "tracker-taskweave-worker")
	require.Equal(t, "tracker-taskweave-worker", so.Spec.ScaleTargetRef.Name)
	require.EqualValues(t, 1, *so.Spec.MinReplicaCount)
	require.EqualValues(t, 12, *so.Spec.MaxReplicaCount)
	require.Equal(t, "postgresql", so.Spec.Triggers[0].Type)
	require.Equal(t, "50", so.Spec.Triggers[0].Metadata["targetQueryValue"])
	ta := get[TriggerAuthentication](t, r, "TriggerAuthentication", so.Spec.Triggers[0].AuthenticationRef.Name)
	require.Equal(t, "TW_DATABASE_URL", ta.Spec.SecretTargetRef[0].Key)
	require.Equal(t, "connection", ta.Spec.SecretTargetRef[0].Parameter)
	ing := get[networkingv1.Ingress](t, r, "Ingress", "tracker-taskweave")
	require.Equal(t, "tracker.example.com", ing.Spec.Rules[0].Host)
	sm := get[ServiceMonitor](t, r, "ServiceMonitor", "tracker-taskweave")
	require.Len(t, sm.Spec.Endpoints, 2)
	require.Equal(t, "prometheus", sm.Labels["release"])
	require.Contains(t, r.notes, "At most 8 APIs and 12 workers: 220 connections")
}

// configVariables reads every TW_ variable of cmd/taskweave's Config struct from its
// env tags.
func configVariables(t *testing.T) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../../cmd/taskweave/config.go", nil, 0)
	require.NoError(t, err)
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "Config" {
			return true
		}
		for _, field := range ts.Type.(*ast.StructType).Fields.List {
			if field.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(field.Tag.Value)
			env := reflect.StructTag(tag).Get("env")
			if name, _, _ := strings.Cut(env, ","); strings.HasPrefix(name, "TW_") {
				out = append(out, name)
			}
		}
		return false
	})
	require.Greater(t, len(out), 40)
	return out
}

// TestScaledObjectQueryCountsAvailableJobs: the KEDA trigger's query, as rendered with
// and without a queue list, answers the number of available River jobs on a database
// holding jobs in other states and queues too.
func TestScaledObjectQueryCountsAvailableJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.NewDB(t)
	inserter, err := jobs.NewInserter(db.SQL, nil)
	require.NoError(t, err)
	insert := func(queue string, n int, opts *river.InsertOpts) {
		for i := 0; i < n; i++ {
			o := river.InsertOpts{Queue: queue}
			if opts != nil {
				o.ScheduledAt = opts.ScheduledAt
			}
			_, err := inserter.Insert(ctx, countedJob{N: i, Queue: queue, Later: opts != nil}, &o)
			require.NoError(t, err)
		}
	}
	insert(jobs.QueueWebhooks, 7, nil)
	insert(jobs.QueueMail, 4, nil)
	insert(jobs.QueueAudit, 5, nil)
	insert(jobs.QueueWebhooks, 3, &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}) // scheduled
	_, err = db.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', attempted_at = now(), attempt = 1
		WHERE id IN (SELECT id FROM river_job WHERE queue = 'audit' AND state = 'available' LIMIT 2)`)
	require.NoError(t, err)

	count := func(valuesFile string) int {
		r := render(t, valuesFile)
		so := get[ScaledObject](t, r, "ScaledObject", "tracker-taskweave-worker")
		var n int
		require.NoError(t, db.Pool.QueryRow(ctx, so.Spec.Triggers[0].Metadata["query"]).Scan(&n))
		return n
	}
	require.Equal(t, 7+4, count("taskweave/values-full.yaml"), "webhooks, mail and notifications: the available ones")
	all := filepath.Join(t.TempDir(), "keda.yaml")
	require.NoError(t, os.WriteFile(all, []byte("keda:\n  enabled: true\n"), 0o600))
	require.Equal(t, 7+4+3, count(all), "every queue's available jobs")
}

// countedJob is a job kind no worker runs: it only fills the queue.
type countedJob struct {
	N     int    `json:"n"`
	Queue string `json:"queue"`
	Later bool   `json:"later"`
}

func (countedJob) Kind() string { return "test.counted" }
