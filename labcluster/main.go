// Command labcluster runs a real, local Kubernetes control plane for tests and
// benchmarks: etcd, kube-apiserver, kube-scheduler, kube-controller-manager
// and kwok (fake kubelets), all built from upstream sources into one
// multi-call binary. Each component runs as its own process; "up" re-executes
// this binary once per component.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubectl auth plugins
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectl "k8s.io/kubectl/pkg/cmd"
	kubectlutil "k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	kcm "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
	"sigs.k8s.io/kwok/pkg/utils/signals"
)

const usage = `usage: labcluster COMMAND [ARGS...]

Cluster commands:
  up    --dir DIR [--timeout 3m] [--gpu-operator [--cluster-policy sample|none|FILE]]
                                   start a control plane, write DIR/kubeconfig;
                                   --gpu-operator: also the real NVIDIA GPU Operator
  down  --dir DIR                  stop every process started by "up"
  nodes --dir DIR --count N [--prefix P] [--labels k=v,...]
                                   create N fake nodes and wait until Ready

Components (normally started by "up"):
  etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kwok, kubectl,
  gpu-operator (in a private mount namespace and root)
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	name := os.Args[1]
	// Each component sees itself as argv[0], as if it were its own binary.
	os.Args = os.Args[1:]
	switch name {
	case "etcd":
		etcdmain.Main(os.Args)
	case "kube-apiserver":
		os.Exit(cli.Run(apiserver.NewAPIServerCommand()))
	case "kube-scheduler":
		os.Exit(cli.Run(scheduler.NewSchedulerCommand()))
	case "kube-controller-manager":
		os.Exit(cli.Run(kcm.NewControllerManagerCommand()))
	case "kubectl":
		_, _ = logs.GlogSetter(kubectl.GetLogVerbosity(os.Args))
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			kubectlutil.CheckErr(err)
		}
	case "kwok":
		os.Exit(runKwok())
	case operatorComponent:
		exitOn(runGPUOperator(os.Args[1:]))
	case "up":
		exitOn(up(os.Args[1:]))
	case "down":
		exitOn(down(os.Args[1:]))
	case "nodes":
		exitOn(nodes(os.Args[1:]))
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "labcluster: unknown command %q\n\n%s", name, usage)
		os.Exit(2)
	}
}

func exitOn(err error) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "labcluster: %v\n", err)
		os.Exit(1)
	}
}

// runKwok mirrors sigs.k8s.io/kwok/cmd/kwok/main.go.
func runKwok() int {
	// Kubernetes packages linked into this binary register global flags
	// (e.g. --version) that kwok's own binary does not have.
	pflag.CommandLine = pflag.NewFlagSet(os.Args[0], pflag.ExitOnError)
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}
	ctx := signals.SetupSignalContext()
	ctx, logger := kwoklog.InitFlags(ctx, flagset)
	ctx, err := kwokconfig.InitFlags(ctx, flagset)
	if err != nil {
		logger.Error("Init config flags", "err", err)
		return 1
	}
	command := kwokcmd.NewCommand(ctx)
	command.PersistentFlags().AddFlagSet(flagset)
	if err := command.ExecuteContext(ctx); err != nil {
		logger.Error("Execute exit", "err", err)
		return 1
	}
	return 0
}
