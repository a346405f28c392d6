package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodes bulk-creates fake nodes (kwok makes them Ready) for benchmarks.
func nodes(args []string) error {
	fs := flag.NewFlagSet("nodes", flag.ExitOnError)
	dir := fs.String("dir", "", "state directory of a running labcluster (required)")
	count := fs.Int("count", 0, "number of nodes to create")
	prefix := fs.String("prefix", "bulk-", "node name prefix; nodes are PREFIX0..PREFIX(N-1)")
	labelList := fs.String("labels", "", "comma-separated k=v labels for every node")
	workers := fs.Int("concurrency", 32, "concurrent create requests")
	wait := fs.Bool("wait", true, "wait until every node is Ready and untainted")
	timeout := fs.Duration("timeout", 15*time.Minute, "give up after this long")
	_ = fs.Parse(args)
	if *dir == "" || *count <= 0 {
		return errors.New("nodes: --dir and --count are required")
	}
	labels := map[string]string{}
	for kv := range strings.SplitSeq(*labelList, ",") {
		if kv == "" {
			continue
		}
		k, v, _ := strings.Cut(kv, "=")
		labels[k] = v
	}
	client, err := clientFor(filepath.Join(*dir, "kubeconfig"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	start := time.Now()
	names := make(chan string)
	var wg sync.WaitGroup
	var failed atomic.Int64
	var firstErr atomic.Value
	for range *workers {
		wg.Go(func() {
			for name := range names {
				node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name,
					Labels: map[string]string{"kubernetes.io/hostname": name}}}
				for k, v := range labels {
					node.Labels[k] = v
				}
				if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err)
				}
			}
		})
	}
	for i := range *count {
		names <- fmt.Sprintf("%s%d", *prefix, i)
	}
	close(names)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		return fmt.Errorf("%d of %d creates failed, first: %v", n, *count, firstErr.Load())
	}
	fmt.Printf("created %d nodes in %.1fs\n", *count, time.Since(start).Seconds())
	if !*wait {
		return nil
	}
	for {
		list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{ResourceVersion: "0"})
		if err != nil {
			return err
		}
		ready := 0
		for i := range list.Items {
			if strings.HasPrefix(list.Items[i].Name, *prefix) && nodeReady(&list.Items[i]) == nil {
				ready++
			}
		}
		if ready >= *count {
			fmt.Printf("%d nodes Ready and schedulable after %.1fs\n", ready, time.Since(start).Seconds())
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("only %d of %d nodes Ready: %w", ready, *count, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
