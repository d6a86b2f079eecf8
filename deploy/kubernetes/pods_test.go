package kubernetes_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

// foreignImages are the images the manifests use that the compose lab does
// not; every other image must be compose.yaml's, tag included.
var foreignImages = []string{"edoburu/pgbouncer:v1.25.2-p0"}

// composeImages returns compose.yaml's images by repository.
func composeImages(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Image string `json:"image"`
		} `json:"services"`
	}
	// Not strict: compose.yaml's services override keys of the YAML anchors
	// they merge (<<), which a strict decoder calls duplicates.
	if err := yaml.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	images := map[string]string{}
	for _, s := range c.Services {
		repo, _, _ := strings.Cut(s.Image, ":")
		images[repo] = s.Image
	}
	return images
}

// TestContainersArePinnedBoundedAndLockedDown checks every container of
// every overlay: a pinned image (compose.yaml's), requests and limits, and
// the restricted security profile.
func TestContainersArePinnedBoundedAndLockedDown(t *testing.T) {
	compose := composeImages(t)
	for _, r := range renderAll(t) {
		for _, w := range workloads(r) {
			spec := w.pod.Spec
			if spec.ServiceAccountName == "" && (spec.AutomountServiceAccountToken == nil || *spec.AutomountServiceAccountToken) {
				t.Errorf("%s: %s mounts a service account token it does not use", r.overlay, w)
			}
			for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
				where := r.overlay + ": " + w.String() + "/" + c.Name
				repo, tag, _ := strings.Cut(c.Image, ":")
				switch {
				case tag == "" || tag == "latest":
					t.Errorf("%s: image %q is not pinned to a tag", where, c.Image)
				case c.Image != compose[repo] && !slices.Contains(foreignImages, c.Image):
					t.Errorf("%s: image %q, compose.yaml has %q", where, c.Image, compose[repo])
				}
				if c.ImagePullPolicy != corev1.PullIfNotPresent {
					t.Errorf("%s: imagePullPolicy %q; images loaded into kind must not be pulled (IfNotPresent)", where, c.ImagePullPolicy)
				}
				for _, res := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
					req, lim := c.Resources.Requests[res], c.Resources.Limits[res]
					if req.IsZero() || lim.IsZero() || req.Cmp(lim) > 0 {
						t.Errorf("%s: %s request %s, limit %s: want both, request <= limit", where, res, req.String(), lim.String())
					}
				}
				checkSecurity(t, where, spec.SecurityContext, c.SecurityContext)
				checkEnvReferences(t, r, where, c)
			}
		}
	}
}

// checkSecurity checks the restricted Pod Security Standard's container
// rules, with a read-only root file system on top.
func checkSecurity(t *testing.T, where string, pod *corev1.PodSecurityContext, c *corev1.SecurityContext) {
	t.Helper()
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	if c == nil {
		c = &corev1.SecurityContext{}
	}
	isTrue := func(b *bool) bool { return b != nil && *b }
	nonRoot := (isTrue(c.RunAsNonRoot) || (c.RunAsNonRoot == nil && isTrue(pod.RunAsNonRoot)))
	user := c.RunAsUser
	if user == nil {
		user = pod.RunAsUser
	}
	seccomp := c.SeccompProfile
	if seccomp == nil {
		seccomp = pod.SeccompProfile
	}
	switch {
	case !nonRoot || user == nil || *user == 0:
		t.Errorf("%s: must run as non-root with a numeric user", where)
	case c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation:
		t.Errorf("%s: allowPrivilegeEscalation must be false", where)
	case !isTrue(c.ReadOnlyRootFilesystem):
		t.Errorf("%s: the root file system must be read-only", where)
	case seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault:
		t.Errorf("%s: seccomp profile must be RuntimeDefault", where)
	case c.Capabilities == nil || !slices.Equal(c.Capabilities.Drop, []corev1.Capability{"ALL"}) || len(c.Capabilities.Add) > 0:
		t.Errorf("%s: must drop all capabilities and add none", where)
	}
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkEnvReferences checks that every $(VAR) the kubelet is to expand
// names a variable it knows by then: in env, one defined before (or by
// envFrom); in command and args, any. An unknown one stays as literal text.
func checkEnvReferences(t *testing.T, r *rendered, where string, c corev1.Container) {
	t.Helper()
	known := map[string]bool{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil {
			for k := range configMap(t, r, unhashed(from.ConfigMapRef.Name)).Data {
				known[k] = true
			}
		}
	}
	for _, e := range c.Env {
		for _, m := range envRef.FindAllStringSubmatch(e.Value, -1) {
			if !known[m[1]] {
				t.Errorf("%s: env %s refers to $(%s) before it is defined", where, e.Name, m[1])
			}
		}
		known[e.Name] = true
	}
	for _, s := range slices.Concat(c.Command, c.Args) {
		for _, m := range envRef.FindAllStringSubmatch(s, -1) {
			if !known[m[1]] {
				t.Errorf("%s: %q refers to $(%s), which the container does not define", where, s, m[1])
			}
		}
	}
}

// env returns the container's environment as the kubelet resolves it:
// envFrom ConfigMaps, then env (a value from a Secret or a field reads "").
func env(t *testing.T, r *rendered, c corev1.Container) map[string]string {
	t.Helper()
	vars := map[string]string{}
	for _, from := range c.EnvFrom {
		if from.ConfigMapRef != nil {
			for k, v := range configMap(t, r, unhashed(from.ConfigMapRef.Name)).Data {
				vars[k] = v
			}
		}
	}
	for _, e := range c.Env {
		vars[e.Name] = e.Value
	}
	return vars
}

// TestServersProbeAndDrain checks the long-running containers: liveness and
// readiness probes, and a preStop delay so that endpoints are removed before
// the listener closes. The services probe /livez and /readyz, and their
// grace period covers the preStop sleep and SHUTDOWN_TIMEOUT.
func TestServersProbeAndDrain(t *testing.T) {
	services := 0
	for _, r := range renderAll(t) {
		for _, w := range workloads(r) {
			if w.kind == "Job" {
				continue
			}
			grace := time.Duration(*w.pod.Spec.TerminationGracePeriodSeconds) * time.Second
			for _, c := range w.pod.Spec.Containers {
				where := r.overlay + ": " + w.String() + "/" + c.Name
				if c.LivenessProbe == nil || c.ReadinessProbe == nil {
					t.Errorf("%s: want a liveness and a readiness probe", where)
				}
				pre := c.Lifecycle
				if pre == nil || pre.PreStop == nil || (pre.PreStop.Sleep == nil && pre.PreStop.Exec == nil) {
					t.Errorf("%s: no preStop delay", where)
					continue
				}
				if !strings.HasPrefix(c.Image, "orderlab/") {
					continue
				}
				services++
				if !httpProbe(c.LivenessProbe, "/livez") || !httpProbe(c.ReadinessProbe, "/readyz") || !httpProbe(c.StartupProbe, "/livez") {
					t.Errorf("%s: want liveness and startup on /livez, readiness on /readyz, all on port http", where)
				}
				if pre.PreStop.Sleep == nil || pre.PreStop.Sleep.Seconds < 1 {
					t.Errorf("%s: want a preStop sleep", where)
					continue
				}
				sleep := time.Duration(pre.PreStop.Sleep.Seconds) * time.Second
				shutdown := 30 * time.Second // the services' default
				if v := env(t, r, c)["SHUTDOWN_TIMEOUT"]; v != "" {
					var err error
					if shutdown, err = time.ParseDuration(v); err != nil {
						t.Fatalf("%s: SHUTDOWN_TIMEOUT %q: %v", where, v, err)
					}
				}
				if grace <= sleep+shutdown {
					t.Errorf("%s: terminationGracePeriodSeconds %v, want more than the preStop sleep (%v) plus SHUTDOWN_TIMEOUT (%v)", where, grace, sleep, shutdown)
				}
			}
		}
	}
	if services == 0 {
		t.Error("no service container found")
	}
}

func httpProbe(p *corev1.Probe, path string) bool {
	return p != nil && p.HTTPGet != nil && p.HTTPGet.Path == path && p.HTTPGet.Port.String() == "http"
}

// TestServicesReachTheirPods checks that every Service selects the pods of
// one workload and that its target ports are ports those pods name.
func TestServicesReachTheirPods(t *testing.T) {
	for _, r := range renderAll(t) {
		for _, s := range objectsOf[corev1.Service](r) {
			sel := labels.SelectorFromSet(s.Spec.Selector)
			var pods []workload
			for _, w := range workloads(r) {
				if w.kind != "Job" && sel.Matches(labels.Set(w.pod.Labels)) {
					pods = append(pods, w)
				}
			}
			if len(s.Spec.Selector) == 0 || len(pods) != 1 {
				t.Errorf("%s: Service %s selects %d workloads, want 1", r.overlay, s.Name, len(pods))
				continue
			}
			for _, p := range s.Spec.Ports {
				found := false
				for _, c := range pods[0].pod.Spec.Containers {
					found = found || slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool {
						return cp.Name == p.TargetPort.String() && cp.ContainerPort == p.Port
					})
				}
				if !found {
					t.Errorf("%s: Service %s port %d targets %q, which %s does not name on that port", r.overlay, s.Name, p.Port, p.TargetPort.String(), pods[0])
				}
			}
		}
	}
}

// TestServicesTakeTheAdminTokenFromASecret: the knob API's token
// (ADMIN_TOKEN, docs/reference/knobs.md) comes from a Secret of the
// overlay, never from a literal or a ConfigMap.
func TestServicesTakeTheAdminTokenFromASecret(t *testing.T) {
	for _, r := range renderAll(t) {
		for _, w := range workloads(r) {
			for _, c := range w.pod.Spec.Containers {
				if !strings.HasPrefix(c.Image, "orderlab/") || w.kind == "Job" {
					continue
				}
				where := r.overlay + ": " + w.String() + "/" + c.Name
				var ref *corev1.SecretKeySelector
				for _, e := range c.Env {
					if e.Name == "ADMIN_TOKEN" && e.ValueFrom != nil {
						ref = e.ValueFrom.SecretKeyRef
					}
				}
				if ref == nil {
					t.Errorf("%s: want ADMIN_TOKEN from a secretKeyRef", where)
					continue
				}
				if s := secret(t, r, unhashed(ref.Name)); len(s.Data[ref.Key])+len(s.StringData[ref.Key]) == 0 {
					t.Errorf("%s: Secret %s has no key %s", where, ref.Name, ref.Key)
				}
				if env(t, r, c)["ADMIN_TOKEN"] != "" {
					t.Errorf("%s: ADMIN_TOKEN also set as a literal", where)
				}
			}
		}
	}
}
