package main

// The real NVIDIA GPU Operator (labcluster/gpu-operator/, its own Go module)
// as one more component of "up --gpu-operator".
//
// The operator reads its state manifests from the fixed path
// /opt/gpu-operator/ (NVIDIADriver manifests from /opt/gpu-operator/manifests/)
// and the host's OS from /host-etc/os-release. Neither path is created on this
// machine: the component runs in a private mount namespace (the process is
// started with CLONE_NEWNS, and Go makes "/" a private mount there), bind
// mounts what the operator needs into a root directory inside DIR, chroots
// into it and executes the operator. The host's mount table and filesystem
// stay untouched; the mounts vanish with the process.

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"
)

const (
	operatorNamespace = "gpu-operator"
	operatorComponent = "gpu-operator"
)

var (
	crdGVR    = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	policyGVR = schema.GroupVersionResource{Group: "nvidia.com", Version: "v1", Resource: "clusterpolicies"}
)

// operatorImages maps the operator's image environment variables to the
// Helm chart's values.yaml sections that define the same images. The
// operator uses them when the ClusterPolicy leaves an image unset; kwok runs
// no image, so they only make the DaemonSets look like a real install.
var operatorImages = map[string]string{
	"DRIVER_IMAGE":                "driver",
	"DRIVER_MANAGER_IMAGE":        "driver.manager",
	"CONTAINER_TOOLKIT_IMAGE":     "toolkit",
	"DEVICE_PLUGIN_IMAGE":         "devicePlugin",
	"GFD_IMAGE":                   "gfd",
	"DCGM_IMAGE":                  "dcgm",
	"DCGM_EXPORTER_IMAGE":         "dcgmExporter",
	"VALIDATOR_IMAGE":             "validator",
	"MIG_MANAGER_IMAGE":           "migManager",
	"SANDBOX_DEVICE_PLUGIN_IMAGE": "sandboxDevicePlugin",
	"VFIO_MANAGER_IMAGE":          "vfioManager",
	"VGPU_MANAGER_IMAGE":          "vgpuManager",
	"VGPU_DEVICE_MANAGER_IMAGE":   "vgpuDeviceManager",
	"KATA_MANAGER_IMAGE":          "kataManager",
	"CC_MANAGER_IMAGE":            "ccManager",
	"GDS_IMAGE":                   "gds",
	"GDRCOPY_IMAGE":               "gdrcopy",
	"CUDA_BASE_IMAGE":             "operator.initContainer",
}

// gpuOperatorOptions are the "up" flags for the operator.
type gpuOperatorOptions struct {
	enabled bool
	home    string // labcluster/gpu-operator/bin: gpu-operator binary and share/
	policy  string // ClusterPolicy file, "sample" or "none"
}

func (o *gpuOperatorOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.enabled, "gpu-operator", false,
		"also run the real NVIDIA GPU Operator (build it first: labcluster/gpu-operator/build)")
	fs.StringVar(&o.home, "gpu-operator-home", "",
		"directory with the operator's binary and share/ (default: ../gpu-operator/bin next to this binary)")
	fs.StringVar(&o.policy, "cluster-policy", "sample",
		`ClusterPolicy to create: "sample" (the module's config/samples/v1_clusterpolicy.yaml), "none", or a YAML file`)
}

func (o *gpuOperatorOptions) resolve() error {
	if !o.enabled {
		return nil
	}
	if o.home == "" {
		self, err := os.Executable()
		if err != nil {
			return err
		}
		o.home = filepath.Join(filepath.Dir(self), "..", "gpu-operator", "bin")
	}
	home, err := filepath.Abs(o.home)
	if err != nil {
		return err
	}
	o.home = filepath.Clean(home)
	for _, need := range []string{"gpu-operator", "share/VERSION", "share/opt/gpu-operator/state-driver"} {
		if _, err := os.Stat(filepath.Join(o.home, need)); err != nil {
			return fmt.Errorf("--gpu-operator: %v (run labcluster/gpu-operator/build)", err)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("--gpu-operator: needs root (a private mount namespace with bind mounts and chroot)")
	}
	return nil
}

// startGPUOperator installs the CRDs and namespace, starts the operator in
// its private root and creates the ClusterPolicy. It returns once the
// operator answers /readyz and, with a ClusterPolicy, has written its status.
func (c *cluster) startGPUOperator(ctx context.Context, o *gpuOperatorOptions, client *kubernetes.Clientset) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(c.dir, "kubeconfig"))
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	share := filepath.Join(o.home, "share")
	crds, err := filepath.Glob(filepath.Join(share, "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		return fmt.Errorf("gpu-operator: no CRDs in %s", filepath.Join(share, "crds"))
	}
	var names []string
	for _, file := range crds {
		objs, err := readObjects(file)
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if _, err := dyn.Resource(crdGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("gpu-operator: creating CRD from %s: %w", file, err)
			}
			names = append(names, obj.GetName())
		}
	}
	for _, name := range names {
		if err := c.wait(ctx, "kube-apiserver", "CRD "+name+" Established", func(ctx context.Context) error {
			crd, err := dyn.Resource(crdGVR).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			conds, _, _ := unstructured.NestedSlice(crd.Object, "status", "conditions")
			for _, cond := range conds {
				m, _ := cond.(map[string]any)
				if m["type"] == "Established" && m["status"] == "True" {
					return nil
				}
			}
			return fmt.Errorf("CRD %s not Established yet", name)
		}); err != nil {
			return err
		}
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("gpu-operator: creating namespace: %w", err)
	}

	root := filepath.Join(c.dir, "gpu-operator-root")
	if err := prepareRoot(root); err != nil {
		return err
	}
	env, err := operatorEnv(share)
	if err != nil {
		return err
	}
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	probe := fmt.Sprintf("127.0.0.1:%d", ports[0])
	c.startIn(operatorComponent, env, &syscall.SysProcAttr{Setsid: true, Unshareflags: syscall.CLONE_NEWNS},
		"--root="+root, "--home="+o.home, "--",
		"--kubeconfig=/etc/kubernetes/kubeconfig", "--metrics-bind-address=0",
		"--health-probe-bind-address="+probe, "--zap-time-encoding=rfc3339")
	if err := c.wait(ctx, operatorComponent, "operator /readyz", func(context.Context) error {
		return httpOK("http://" + probe + "/readyz")
	}); err != nil {
		return err
	}
	if o.policy == "none" {
		return nil
	}
	file := o.policy
	if file == "sample" {
		file = filepath.Join(share, "clusterpolicy-sample.yaml")
	}
	objs, err := readObjects(file)
	if err != nil {
		return err
	}
	if len(objs) != 1 || objs[0].GetKind() != "ClusterPolicy" {
		return fmt.Errorf("gpu-operator: %s must hold exactly one ClusterPolicy", file)
	}
	policy := objs[0]
	if _, err := dyn.Resource(policyGVR).Create(ctx, policy, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("gpu-operator: creating ClusterPolicy from %s: %w", file, err)
	}
	return c.wait(ctx, operatorComponent, "ClusterPolicy status", func(ctx context.Context) error {
		got, err := dyn.Resource(policyGVR).Get(ctx, policy.GetName(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if state, _, _ := unstructured.NestedString(got.Object, "status", "state"); state == "" {
			return errors.New("ClusterPolicy has no status.state yet")
		}
		return nil
	})
}

// readObjects reads every YAML document of file as an object.
func readObjects(file string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		if len(obj) > 0 {
			out = append(out, &unstructured.Unstructured{Object: obj})
		}
	}
}

// operatorEnv is the operator's environment: its namespace and the image
// references of the Helm chart's values.yaml (share/values.yaml).
func operatorEnv(share string) ([]string, error) {
	data, err := os.ReadFile(filepath.Join(share, "values.yaml"))
	if err != nil {
		return nil, err
	}
	values := map[string]any{}
	if err := yaml.Unmarshal(data, &values); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(share, "values.yaml"), err)
	}
	appVersion := "devel"
	if chart, err := os.ReadFile(filepath.Join(share, "Chart.yaml")); err == nil {
		meta := map[string]any{}
		if yaml.Unmarshal(chart, &meta) == nil {
			if v, ok := meta["appVersion"].(string); ok && v != "" {
				appVersion = v
			}
		}
	}
	env := []string{"PATH=/", "OPERATOR_NAMESPACE=" + operatorNamespace, "WATCH_NAMESPACE="}
	keys := make([]string, 0, len(operatorImages))
	for k := range operatorImages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		section, _, _ := unstructured.NestedMap(values, strings.Split(operatorImages[name], ".")...)
		str := func(k string) string { s, _ := section[k].(string); return s }
		repo, image, version := str("repository"), str("image"), str("version")
		if image == "" {
			image = strings.ToLower(strings.TrimSuffix(name, "_IMAGE"))
		}
		if repo == "" {
			repo = "labcluster.invalid" // the chart leaves it to the user (vGPU manager)
		}
		if version == "" {
			version = appVersion // what the chart's templates default to
		}
		env = append(env, fmt.Sprintf("%s=%s/%s:%s", name, repo, image, version))
	}
	return env, nil
}

// prepareRoot creates the operator's root directory inside DIR: empty mount
// points only; the files come from bind mounts in the private namespace.
func prepareRoot(root string) error {
	for _, d := range []string{"opt/gpu-operator", "host-etc", "etc/kubernetes", "proc", "dev", "tmp", "bin"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	for _, f := range []string{"host-etc/os-release", "bin/gpu-operator", "etc/kubernetes/kubeconfig"} {
		fh, err := os.OpenFile(filepath.Join(root, f), os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		fh.Close()
	}
	return nil
}

// runGPUOperator is the "gpu-operator" component. "up" starts it in a new
// mount namespace; it bind mounts the operator's files into --root, chroots
// there and executes the operator with the arguments after "--".
//
//	/bin/gpu-operator               <- HOME/gpu-operator
//	/opt/gpu-operator/              <- HOME/share/opt/gpu-operator (assets/ + manifests/ of the module)
//	/host-etc/os-release            <- /etc/os-release (as the Helm chart mounts it)
//	/etc/kubernetes/kubeconfig      <- DIR/gpu-operator.kubeconfig
//	/proc, /dev                     <- the host's (recursive binds)
func runGPUOperator(args []string) error {
	fs := flag.NewFlagSet("gpu-operator", flag.ExitOnError)
	root := fs.String("root", "", "private root directory (inside the cluster's DIR)")
	home := fs.String("home", "", "labcluster/gpu-operator/bin")
	_ = fs.Parse(args)
	if *root == "" || *home == "" {
		return errors.New("gpu-operator: --root and --home are required")
	}
	// Refuse to mount anything in the mount namespace we were started from.
	self, err1 := os.Readlink("/proc/self/ns/mnt")
	parent, err2 := os.Readlink(fmt.Sprintf("/proc/%d/ns/mnt", os.Getppid()))
	if err1 != nil || err2 != nil || self == parent {
		return fmt.Errorf("gpu-operator: not in a private mount namespace (self %s, parent %s); start it with labcluster up", self, parent)
	}
	dir := filepath.Dir(*root) // the cluster's DIR
	binds := []struct {
		src, dst  string
		recursive bool
		readOnly  bool
	}{
		{filepath.Join(*home, "gpu-operator"), "bin/gpu-operator", false, true},
		{filepath.Join(*home, "share", "opt", "gpu-operator"), "opt/gpu-operator", false, true},
		{"/etc/os-release", "host-etc/os-release", false, true},
		{filepath.Join(dir, operatorKubeconfig), "etc/kubernetes/kubeconfig", false, true},
		{"/proc", "proc", true, false},
		{"/dev", "dev", true, false},
	}
	for _, b := range binds {
		dst := filepath.Join(*root, b.dst)
		flags := uintptr(syscall.MS_BIND)
		if b.recursive {
			flags |= syscall.MS_REC
		}
		if err := syscall.Mount(b.src, dst, "", flags, ""); err != nil {
			return fmt.Errorf("gpu-operator: bind mount %s on %s: %w", b.src, dst, err)
		}
		if b.readOnly {
			if err := syscall.Mount("", dst, "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
				return fmt.Errorf("gpu-operator: read-only remount of %s: %w", dst, err)
			}
		}
	}
	if err := syscall.Chroot(*root); err != nil {
		return fmt.Errorf("gpu-operator: chroot %s: %w", *root, err)
	}
	if err := os.Chdir("/"); err != nil {
		return err
	}
	argv := append([]string{operatorComponent}, fs.Args()...)
	return syscall.Exec("/bin/gpu-operator", argv, os.Environ())
}

// operatorKubeconfig is the operator's own client identity (user
// "gpu-operator" in system:masters: the Helm chart's ClusterRole lets it
// create the RBAC of every operand, which needs escalate/bind anyway).
const operatorKubeconfig = "gpu-operator.kubeconfig"
