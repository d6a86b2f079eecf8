package kubernetes_test

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestLoadJobShardsOneSchedule checks the sharded load of lab/loadtest: an
// indexed Job of SHARDS generators, each sending its shard (its completion
// index) of one schedule against a Service of the lab, and a merge Job that
// waits for SHARDS reports on the lab's results volume.
func TestLoadJobShardsOneSchedule(t *testing.T) {
	r, lab := overlay(t, "lab/loadtest"), overlay(t, "lab")
	settings := configMap(t, r, "loadtest").Data
	shards, err := strconv.Atoi(settings["SHARDS"])
	if err != nil || shards < 1 {
		t.Fatalf("SHARDS %q", settings["SHARDS"])
	}
	job := named(t, r, "loadtest", func(j *batchv1.Job) string { return j.Name })
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Error("the generators' Job is not indexed: its pods would not know their shard")
	}
	if replicas(s.Completions) != int32(shards) || replicas(s.Parallelism) != int32(shards) {
		t.Errorf("completions %d, parallelism %d, want SHARDS (%d) of each: all generators at once", replicas(s.Completions), replicas(s.Parallelism), shards)
	}
	if s.BackoffLimit == nil || *s.BackoffLimit != 0 {
		t.Error("a failed generator must not run again: its shard would be sent late, and twice")
	}
	c := s.Template.Spec.Containers[0]
	index := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "SHARD" })
	if index < 0 || c.Env[index].ValueFrom == nil || c.Env[index].ValueFrom.FieldRef == nil ||
		c.Env[index].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Error("SHARD must be the pod's completion index")
	}
	// The lab's image runs lab by default: the generator is its loadtest.
	if !slices.Equal(c.Command, []string{"/usr/local/bin/loadtest"}) {
		t.Errorf("generator command %q: want /usr/local/bin/loadtest (the lab's image's entrypoint is lab)", c.Command)
	}
	if c.Args[0] != "open" || !slices.Contains(c.Args, "-shard=$(SHARD)/$(SHARDS)") || !slices.Contains(c.Args, "-json=/results/shard-$(SHARD).json") {
		t.Errorf("generator args %q: want open -shard=$(SHARD)/$(SHARDS) -json=/results/shard-$(SHARD).json", c.Args)
	}
	checkTarget(t, lab, settings["TARGET"])

	merge := named(t, r, "loadtest-merge", func(j *batchv1.Job) string { return j.Name })
	script := strings.Join(merge.Spec.Template.Spec.Containers[0].Args, "\n")
	if !strings.Contains(script, `-ge "$SHARDS"`) || !strings.Contains(script, "loadtest merge") {
		t.Errorf("the merge Job does not wait for SHARDS reports and merge them:\n%s", script)
	}
	for _, j := range []*batchv1.Job{job, merge} {
		claims := 0
		for _, v := range j.Spec.Template.Spec.Volumes {
			if v.PersistentVolumeClaim == nil {
				continue
			}
			claims++
			named(t, lab, v.PersistentVolumeClaim.ClaimName, func(p *corev1.PersistentVolumeClaim) string { return p.Name })
		}
		if claims != 1 {
			t.Errorf("Job %s mounts %d claims, want the lab's results volume", j.Name, claims)
		}
	}
}

// checkTarget checks that the load's URL is a port of a Service of the lab.
func checkTarget(t *testing.T, lab *rendered, target string) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil || u.Port() == "" {
		t.Fatalf("TARGET %q: want http://<service>:<port>/path", target)
	}
	svc := named(t, lab, u.Hostname(), func(s *corev1.Service) string { return s.Name })
	if !slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return strconv.Itoa(int(p.Port)) == u.Port() }) {
		t.Errorf("TARGET %s: Service %s has no port %s", target, svc.Name, u.Port())
	}
}
