package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	nodeheartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
	podfast "sigs.k8s.io/kwok/kustomize/stage/pod/fast"
)

// components in start order; "down" stops them in reverse.
var components = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", operatorComponent}

// controllers run by kube-controller-manager: what workloads, namespaces,
// service accounts, node taints and DRA (claims from templates) need. No cloud,
// volume or certificate ones.
var controllers = []string{
	"serviceaccount-controller", "serviceaccount-token-controller",
	"root-ca-certificate-publisher-controller", "clusterrole-aggregation-controller",
	"namespace-controller", "garbage-collector-controller", "pod-garbage-collector-controller",
	"daemonset-controller", "deployment-controller", "replicaset-controller",
	"statefulset-controller", "job-controller", "cronjob-controller", "ttl-after-finished-controller",
	"node-lifecycle-controller", "taint-eviction-controller", "resourceclaim-controller",
}

// auditPolicy logs every request on nodes and every list and watch, at Metadata
// level, so tests can count the writes, lists and watches a tool makes.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources: [{group: "", resources: ["nodes", "nodes/status"]}]
  verbs: ["get", "list", "create", "update", "patch", "delete", "deletecollection"]
- level: Metadata
  verbs: ["list", "watch"]
- level: None
`

// kwokConfig: fake kubelets for every node. Node leases are renewed every
// leaseSeconds/4 (cheap at 5,000 nodes); node status heartbeats every 10 min.
const kwokConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  manageAllNodes: true
  cidr: 10.64.0.0/10
  nodeLeaseDurationSeconds: %d
  nodeLeaseParallelism: 8
  nodePlayStageParallelism: 16
  podPlayStageParallelism: 16
`

const leaseSeconds = 1200

type proc struct {
	name string
	done chan struct{}
	err  error
}

type cluster struct {
	dir         string
	procs       []*proc
	gpuOperator gpuOperatorOptions
}

func up(args []string) error {
	fs := flag.NewFlagSet("up", flag.ExitOnError)
	dir := fs.String("dir", "", "state directory (required)")
	timeout := fs.Duration("timeout", 3*time.Minute, "give up after this long")
	c := &cluster{}
	c.gpuOperator.register(fs)
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("up: --dir is required")
	}
	if err := c.gpuOperator.resolve(); err != nil {
		return err
	}
	start := time.Now()
	var err error
	if c.dir, err = filepath.Abs(*dir); err != nil {
		return err
	}
	_ = stopAll(c.dir) // a previous cluster in the same directory
	for _, old := range []string{"etcd", "audit.log"} {
		if err := os.RemoveAll(filepath.Join(c.dir, old)); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	server, err := c.run(ctx)
	if err != nil {
		_ = stopAll(c.dir)
		return err
	}
	extra := ""
	if c.gpuOperator.enabled {
		extra = ", gpu-operator running"
	}
	fmt.Printf("labcluster up in %.1fs: server %s, kubeconfig %s%s\n",
		time.Since(start).Seconds(), server, filepath.Join(c.dir, "kubeconfig"), extra)
	return nil
}

func (c *cluster) run(ctx context.Context) (string, error) {
	ports, err := freePorts(3)
	if err != nil {
		return "", err
	}
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	server := fmt.Sprintf("https://127.0.0.1:%d", ports[2])
	if err := c.writeConfig(server); err != nil {
		return "", err
	}
	d := func(name string) string { return filepath.Join(c.dir, name) }

	c.start("etcd", "--name=default", "--data-dir="+d("etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=default="+peerURL, "--unsafe-no-fsync", "--log-level=warn")
	if err := c.wait(ctx, "etcd", "etcd health", func(context.Context) error {
		return httpOK(etcdURL + "/health")
	}); err != nil {
		return "", err
	}

	c.start("kube-apiserver", "--advertise-address=127.0.0.1", "--bind-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(ports[2]), "--etcd-servers="+etcdURL,
		"--authorization-mode=Node,RBAC", "--allow-privileged=true",
		"--endpoint-reconciler-type=none", // 127.0.0.1 may not be an endpoint
		"--service-cluster-ip-range=10.0.0.0/24",
		"--client-ca-file="+d("ca.crt"),
		"--tls-cert-file="+d("apiserver.crt"), "--tls-private-key-file="+d("apiserver.key"),
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+d("sa.pub"), "--service-account-signing-key-file="+d("sa.key"),
		"--audit-log-path="+d("audit.log"), "--audit-policy-file="+d("audit-policy.yaml"),
		"--audit-log-mode=blocking")
	client, err := clientFor(d("kubeconfig"))
	if err != nil {
		return "", err
	}
	if err := c.wait(ctx, "kube-apiserver", "/readyz", func(ctx context.Context) error {
		_, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return "", err
	}

	c.start("kube-controller-manager", "--kubeconfig="+d("controller-manager.kubeconfig"),
		"--leader-elect=false", "--secure-port=0", "--use-service-account-credentials=true",
		"--kube-api-qps=1000", "--kube-api-burst=2000", // default 20/30 throttles 5,000 nodes
		"--controllers="+strings.Join(controllers, ","),
		"--service-account-private-key-file="+d("sa.key"), "--root-ca-file="+d("ca.crt"),
		"--node-monitor-grace-period="+(2*leaseSeconds*time.Second).String())
	c.start("kube-scheduler", "--kubeconfig="+d("scheduler.kubeconfig"),
		"--leader-elect=false", "--secure-port=0", "--kube-api-qps=500", "--kube-api-burst=1000")
	c.start("kwok", "--kubeconfig="+d("kwok.kubeconfig"), "--config="+d("kwok.yaml"))

	if err := c.wait(ctx, "kube-controller-manager", "ServiceAccount default/default",
		func(ctx context.Context) error {
			_, err := client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
			return err
		}); err != nil {
		return "", err
	}
	if err := c.probe(ctx, client); err != nil {
		return "", err
	}
	if c.gpuOperator.enabled {
		return server, c.startGPUOperator(ctx, &c.gpuOperator, client)
	}
	return server, nil
}

// probe checks the whole chain: a node goes Ready (kwok) and loses its
// not-ready taint (node-lifecycle controller), a pod is scheduled onto it
// (scheduler) and runs (kwok). Both are deleted afterwards.
func (c *cluster) probe(ctx context.Context, client kubernetes.Interface) error {
	const name = "labcluster-probe"
	labels := map[string]string{"labcluster.gpulabel.dev/probe": "true"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{NodeSelector: labels,
			Containers: []corev1.Container{{Name: "probe", Image: "probe"}}},
	}
	_ = client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating probe node: %w", err)
	}
	if err := c.wait(ctx, "kwok", "probe node Ready and untainted", func(ctx context.Context) error {
		n, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		return nodeReady(n)
	}); err != nil {
		return err
	}
	if _, err := client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating probe pod: %w", err)
	}
	if err := c.wait(ctx, "kube-scheduler", "probe pod Running", func(ctx context.Context) error {
		p, err := client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if p.Status.Phase != corev1.PodRunning {
			return fmt.Errorf("pod node=%q phase=%s", p.Spec.NodeName, p.Status.Phase)
		}
		return nil
	}); err != nil {
		return err
	}
	zero := int64(0)
	_ = client.CoreV1().Pods("default").Delete(ctx, name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	return c.wait(ctx, "kube-apiserver", "probe cleanup", func(ctx context.Context) error {
		err := client.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		_, err = client.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("probe pod still exists (%v)", err)
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) error {
	for _, t := range n.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady {
			return fmt.Errorf("node %s still has taint %s", n.Name, t.Key)
		}
	}
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
			return nil
		}
	}
	return fmt.Errorf("node %s not Ready", n.Name)
}

func (c *cluster) writeConfig(server string) error {
	p, err := newPKI(c.dir)
	if err != nil {
		return err
	}
	if err := p.writeServing("apiserver"); err != nil {
		return err
	}
	if err := p.writeServiceAccountKeys(); err != nil {
		return err
	}
	kubeconfigs := []struct{ file, user, group string }{
		{"kubeconfig", "labcluster-admin", "system:masters"},
		{"controller-manager.kubeconfig", "system:kube-controller-manager", ""},
		{"scheduler.kubeconfig", "system:kube-scheduler", ""},
		{"kwok.kubeconfig", "kwok", "system:masters"},
	}
	if c.gpuOperator.enabled {
		kubeconfigs = append(kubeconfigs, struct{ file, user, group string }{operatorKubeconfig, "gpu-operator", "system:masters"})
	}
	for _, k := range kubeconfigs {
		var groups []string
		if k.group != "" {
			groups = []string{k.group}
		}
		if err := p.writeKubeconfig(filepath.Join(c.dir, k.file), server, k.user, groups); err != nil {
			return err
		}
	}
	stages := strings.Join([]string{fmt.Sprintf(kwokConfig, leaseSeconds), nodefast.DefaultNodeInit,
		nodeheartbeat.DefaultNodeHeartbeatWithLease, podfast.DefaultPodReady,
		podfast.DefaultPodComplete, podfast.DefaultPodDelete}, "\n---\n")
	if err := os.WriteFile(filepath.Join(c.dir, "kwok.yaml"), []byte(stages), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(c.dir, "audit-policy.yaml"), []byte(auditPolicy), 0o644)
}

// start runs this binary as a component in its own session, logging to
// DIR/NAME.log, so that it outlives "up" and holds none of its descriptors.
func (c *cluster) start(name string, args ...string) {
	c.startIn(name, nil, &syscall.SysProcAttr{Setsid: true}, args...)
}

// startIn is start with an environment (nil: this process's) and process attributes.
func (c *cluster) startIn(name string, env []string, attr *syscall.SysProcAttr, args ...string) {
	p := &proc{name: name, done: make(chan struct{})}
	c.procs = append(c.procs, p)
	fail := func(err error) { p.err = err; close(p.done) }
	self, err := os.Executable()
	if err != nil {
		fail(err)
		return
	}
	log, err := os.Create(filepath.Join(c.dir, name+".log"))
	if err != nil {
		fail(err)
		return
	}
	defer log.Close()
	cmd := exec.Command(self, append([]string{name}, args...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr, cmd.Env = c.dir, log, log, env
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		fail(err)
		return
	}
	pid := strconv.Itoa(cmd.Process.Pid)
	if err := os.WriteFile(filepath.Join(c.dir, name+".pid"), []byte(pid+"\n"), 0o644); err != nil {
		_ = cmd.Process.Kill()
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
}

// wait polls check until it succeeds. It fails early, naming the component
// and showing its log, if any started process exits.
func (c *cluster) wait(ctx context.Context, owner, what string, check func(context.Context) error) error {
	for {
		for _, p := range c.procs {
			select {
			case <-p.done:
				return c.failure(p.name, fmt.Sprintf("%s exited (%v) while waiting for %s", p.name, p.err, what))
			default:
			}
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := check(cctx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return c.failure(owner, fmt.Sprintf("timed out waiting for %s: %v", what, err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func (c *cluster) failure(name, msg string) error {
	logPath := filepath.Join(c.dir, name+".log")
	data, _ := os.ReadFile(logPath)
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 40 {
		lines = lines[len(lines)-40:]
	}
	return fmt.Errorf("%s failed: %s\n--- last lines of %s ---\n%s", name, msg, logPath, strings.Join(lines, "\n"))
}

func down(args []string) error {
	fs := flag.NewFlagSet("down", flag.ExitOnError)
	dir := fs.String("dir", "", "state directory (required)")
	_ = fs.Parse(args)
	if *dir == "" {
		return errors.New("down: --dir is required")
	}
	return stopAll(*dir)
}

// stopAll stops every component that has a PID file in dir: SIGTERM, then
// SIGKILL after 10s. etcd goes last so the others can shut down cleanly.
func stopAll(dir string) error {
	rest := components[1:]
	for _, group := range [][]string{rest, components[:1]} {
		var pids []int
		for _, name := range group {
			pidFile := filepath.Join(dir, name+".pid")
			data, err := os.ReadFile(pidFile)
			if err != nil {
				continue
			}
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && isComponent(pid, name) {
				_ = syscall.Kill(pid, syscall.SIGTERM)
				pids = append(pids, pid)
			}
			_ = os.Remove(pidFile)
		}
		deadline := time.Now().Add(10 * time.Second)
		for _, pid := range pids {
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		for _, pid := range pids {
			for i := 0; alive(pid) && i < 100; i++ {
				time.Sleep(20 * time.Millisecond)
			}
			if alive(pid) {
				return fmt.Errorf("process %d survived SIGKILL", pid)
			}
		}
	}
	return nil
}

// isComponent guards against PID reuse: argv[1] must be the component name
// (argv[0] for the GPU operator, which replaces its starter with exec).
func isComponent(pid int, name string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return false
	}
	argv := bytes.Split(cmdline, []byte{0})
	named := len(argv) > 1 && string(argv[1]) == name
	if name == operatorComponent && len(argv) > 0 && string(argv[0]) == operatorComponent {
		named = true
	}
	return named && alive(pid)
}

// alive is false for exited processes, including unreaped zombies.
func alive(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' && stat[i+2] != 'X'
}

func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func httpOK(url string) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

func clientFor(kubeconfig string) (*kubernetes.Clientset, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 1000, 2000
	return kubernetes.NewForConfig(cfg)
}
