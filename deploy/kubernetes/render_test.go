package kubernetes_test

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// root is the repository's root, from this package's directory.
const root = "../.."

// overlays are the kustomizations a user applies (docs/kubernetes.md).
var overlays = []string{"lab", "operator", "pooled", "lab/loadtest"}

// kinds are the only kinds the manifests may hold, each decoded into its
// Go type. An object of another kind, or with a field its type does not
// have, fails the test: a typo in a manifest is an error here, not a field
// the API server silently drops.
var kinds = map[string]func() any{
	"v1/Namespace":                             func() any { return new(corev1.Namespace) },
	"v1/ConfigMap":                             func() any { return new(corev1.ConfigMap) },
	"v1/Secret":                                func() any { return new(corev1.Secret) },
	"v1/Service":                               func() any { return new(corev1.Service) },
	"v1/ServiceAccount":                        func() any { return new(corev1.ServiceAccount) },
	"v1/PersistentVolumeClaim":                 func() any { return new(corev1.PersistentVolumeClaim) },
	"apps/v1/Deployment":                       func() any { return new(appsv1.Deployment) },
	"apps/v1/StatefulSet":                      func() any { return new(appsv1.StatefulSet) },
	"batch/v1/Job":                             func() any { return new(batchv1.Job) },
	"rbac.authorization.k8s.io/v1/Role":        func() any { return new(rbacv1.Role) },
	"rbac.authorization.k8s.io/v1/RoleBinding": func() any { return new(rbacv1.RoleBinding) },
	"monitoring.coreos.com/v1/PodMonitor":      func() any { return new(monitoringv1.PodMonitor) },
	"monitoring.coreos.com/v1/PrometheusRule":  func() any { return new(monitoringv1.PrometheusRule) },
}

// rendered is one overlay as kustomize builds it, every object decoded.
type rendered struct {
	overlay string
	objects []any
}

// render builds overlay (a directory under deploy/kubernetes) with
// kustomize's own API, as `kubectl apply -k` would, and decodes every object
// strictly into its type.
func render(t *testing.T, overlay string) *rendered {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), filepath.FromSlash(overlay))
	if err != nil {
		t.Fatalf("kustomize build %s: %v", overlay, err)
	}
	r := &rendered{overlay: overlay}
	for _, res := range m.Resources() {
		id := res.GetApiVersion() + "/" + res.GetKind()
		newObj, ok := kinds[id]
		if !ok {
			t.Errorf("%s: %s %s: a kind the tests do not know", overlay, id, res.GetName())
			continue
		}
		data, err := res.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		obj := newObj()
		if err := yaml.UnmarshalStrict(data, obj); err != nil {
			t.Errorf("%s: %s %s: %v", overlay, res.GetKind(), res.GetName(), err)
			continue
		}
		r.objects = append(r.objects, obj)
	}
	return r
}

// renderAll renders every overlay once per test binary.
var renderAll = func() func(t *testing.T) []*rendered {
	cache := map[string]*rendered{}
	return func(t *testing.T) []*rendered {
		t.Helper()
		var rs []*rendered
		for _, o := range overlays {
			if cache[o] == nil {
				cache[o] = render(t, o)
			}
			rs = append(rs, cache[o])
		}
		return rs
	}
}()

func overlay(t *testing.T, name string) *rendered {
	t.Helper()
	i := slices.Index(overlays, name)
	if i < 0 {
		t.Fatalf("no overlay %s", name)
	}
	return renderAll(t)[i]
}

// objectsOf returns r's objects of type *T.
func objectsOf[T any](r *rendered) []*T {
	var out []*T
	for _, o := range r.objects {
		if v, ok := o.(*T); ok {
			out = append(out, v)
		}
	}
	return out
}

// named returns r's object of type *T named name, failing the test without one.
func named[T any](t *testing.T, r *rendered, name string, nameOf func(*T) string) *T {
	t.Helper()
	for _, o := range objectsOf[T](r) {
		if nameOf(o) == name {
			return o
		}
	}
	t.Fatalf("%s: no %T named %s", r.overlay, new(T), name)
	return nil
}

// configMap returns r's ConfigMap name, which kustomize may have given a
// hash suffix.
func configMap(t *testing.T, r *rendered, name string) *corev1.ConfigMap {
	t.Helper()
	return named(t, r, name, func(c *corev1.ConfigMap) string { return unhashed(c.Name) })
}

// secret returns r's Secret name, which kustomize may have given a hash suffix.
func secret(t *testing.T, r *rendered, name string) *corev1.Secret {
	t.Helper()
	return named(t, r, name, func(s *corev1.Secret) string { return unhashed(s.Name) })
}

// hashSuffix is the "-" and ten characters kustomize appends to the name of
// a generated ConfigMap or Secret (from an alphabet without vowels, so
// that no word looks like one).
var hashSuffix = regexp.MustCompile(`-[bcdfghkmt2-9]{10}$`)

func unhashed(name string) string { return hashSuffix.ReplaceAllString(name, "") }

func deployment(t *testing.T, r *rendered, name string) *appsv1.Deployment {
	t.Helper()
	return named(t, r, name, func(d *appsv1.Deployment) string { return d.Name })
}

// workload is a pod template and what owns it.
type workload struct {
	kind, name string
	replicas   int32
	pod        *corev1.PodTemplateSpec
}

func (w workload) String() string { return fmt.Sprintf("%s %s", w.kind, w.name) }

// workloads returns every pod template of r: Deployments, StatefulSets, Jobs.
func workloads(r *rendered) []workload {
	var ws []workload
	for _, d := range objectsOf[appsv1.Deployment](r) {
		ws = append(ws, workload{"Deployment", d.Name, replicas(d.Spec.Replicas), &d.Spec.Template})
	}
	for _, s := range objectsOf[appsv1.StatefulSet](r) {
		ws = append(ws, workload{"StatefulSet", s.Name, replicas(s.Spec.Replicas), &s.Spec.Template})
	}
	for _, j := range objectsOf[batchv1.Job](r) {
		ws = append(ws, workload{"Job", j.Name, replicas(j.Spec.Parallelism), &j.Spec.Template})
	}
	return ws
}

// replicas reads a replica count, whose default is 1.
func replicas(n *int32) int32 {
	if n == nil {
		return 1
	}
	return *n
}

func TestOverlaysRender(t *testing.T) {
	for _, r := range renderAll(t) {
		if len(r.objects) == 0 {
			t.Errorf("%s: no objects", r.overlay)
		}
		for _, o := range r.objects {
			if ns := namespaceOf(o); ns != "orderlab" && ns != "" {
				t.Errorf("%s: %T in namespace %q, want orderlab", r.overlay, o, ns)
			}
		}
	}
}

// namespaceOf returns the namespace of a namespaced object; the Namespace
// itself answers "".
func namespaceOf(o any) string {
	type namespaced interface{ GetNamespace() string }
	if _, ok := o.(*corev1.Namespace); ok {
		return ""
	}
	if n, ok := o.(namespaced); ok {
		if n.GetNamespace() == "" {
			return "(none)"
		}
		return n.GetNamespace()
	}
	return "(unknown)"
}
