"""The lines of the signature table's tests: per row, one real line for each wording its sources cite, and per
row the ordinary lines of a healthy pod of that operand that must name no cause.

Each line is as the program prints it. ``from`` says where it was taken: a public report (quoted as posted) or,
where no report quotes the whole line, ``composed``: the program's own format string (the row's source names the
file and release) around a realistic inner error. Events are ``reason: message``.
"""

from __future__ import annotations

# id -> [(the line, where it comes from)], at least one per entry of the row's source
LINES: dict[str, list[tuple[str, str]]] = {
    "driver-repo-unreachable": [
        ("  Temporary failure resolving 'security.ubuntu.com'", "https://github.com/NVIDIA/gpu-operator/issues/1244"),
        (
            "W: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/bionic/InRelease  Could not connect to "
            "archive.ubuntu.com:80 (91.189.88.142). - connect (111: Connection refused)",
            "https://github.com/NVIDIA/gpu-operator/issues/302 (Ubuntu 18.04 driver image)",
        ),
        (
            ' curl#. "Could not resolve host: mirrorlist. centos. org: Unknown error"',
            "https://github.com/NVIDIA/gpu-operator/issues/379 (centos7 driver image, as posted)",
        ),
        (
            "  - Curl error (6): Couldn't resolve host name for http://base-4-12-rhel8.ocp.svc/rhel-8-baseos/repodata/"
            "repomd.xml [Could not resolve host: base-4-12-rhel8.ocp.svc]",
            "https://github.com/openshift/jenkins/issues/1774 (dnf on RHEL 8)",
        ),
        (
            '14: curl#28 - "Operation timed out after 30001 milliseconds with 0 out of 0 bytes received"',
            "composed: yum's urlgrabber error in the centos7 driver image (curl's timeout)",
        ),
        (
            "E: Failed to fetch http://archive.ubuntu.com/ubuntu/dists/jammy/InRelease  Clearsigned file isn't "
            "valid, got 'NOSPLIT' (does the network require authentication?)",
            "composed: apt-get update in the ubuntu22.04 driver image behind a captive page",
        ),
    ],
    "driver-package-cache": [
        (
            "ERROR: Failed to update package cache.  Ensure that the cluster can access the proper networks.",
            "composed: gpu-driver-container ubuntu22.04/nvidia-driver _update_package_cache (echo of two words)",
        ),
        (
            "FATAL: failed to reach RHEL package repositories.  "
            "Ensure that the cluster can access the proper networks.",
            "https://github.com/NVIDIA/gpu-operator/issues/616 (RHEL 8.6)",
        ),
        (
            "FATAL: failed to update the dnf metadata cache after multiple attempts with releasevers 9.4, 9",
            "composed: gpu-driver-container rhel9/nvidia-driver _install_prerequisites (main)",
        ),
        (
            "FATAL: failed to reach SUSE package repositories.  "
            "Ensure that the cluster can access the proper networks.",
            "composed: gpu-driver-container sle15/nvidia-driver _update_package_cache (25.01.21)",
        ),
        (
            "Error: Failed to download metadata for repo 'AppStream'",
            "composed: libdnf 0.35 libdnf/repo/Repo.cpp Repo::Impl::load as dnf 4 prints it (RHEL 8.0/8.1)",
        ),
        (
            "Error: Failed to download metadata for repo 'rhel-9-for-x86_64-appstream-rpms': Cannot download "
            "repomd.xml: Cannot download repodata/repomd.xml: All mirrors were tried",
            "composed: libdnf 0.69 libdnf/repo/Repo.cpp Repo::Impl::load with librepo's reason (RHEL 9)",
        ),
    ],
    "driver-entitlement": [
        (
            "FATAL: failed to install elfutils packages. RHEL entitlement may be improperly deployed.",
            "composed: gpu-driver-container rhel8/nvidia-driver _install_prerequisites (22.04.19 to 25.01.21)",
        ),
        (
            "FATAL: failed to install kernel packages. Ensure SLES subscription is available.",
            "composed: gpu-driver-container sle15/nvidia-driver _install_prerequisites (25.01.21)",
        ),
        (
            "Error: Unable to find a match: elfutils-libelf-devel.aarch64",
            "composed: gpu-driver-container rhel8/nvidia-driver _install_prerequisites (dnf's error, arm64 node)",
        ),
    ],
    "driver-kernel-headers": [
        (
            "Unable to open the file '/lib/modules/3.10.0-862.el7.x86_64/proc/version' (No such file or directory)."
            "Could not resolve Linux kernel version",
            "https://github.com/NVIDIA/gpu-operator/issues/155 (nvidia-driver pod log)",
        ),
        (
            "Error: Unable to find a match: kernel-headers-4.18.0-305.el8.x86_64 kernel-devel-4.18.0-305.el8.x86_64",
            "composed: gpu-driver-container 22.04.19 rhel8/nvidia-driver _install_prerequisites (dnf's error)",
        ),
        (
            "Error: Unable to find a match: kernel-devel-5.14.0-427.13.1.el9_4.x86_64",
            "composed: gpu-driver-container main rhel9/nvidia-driver _install_prerequisites, dnf naming only the "
            "devel package it did not find",
        ),
    ],
    "driver-kernel-too-new": [
        (
            "/tmp/open-gpu-kernel-modules/kernel-open/nvidia/nv-caps.c:567:5: error: implicit declaration of function "
            "'sys_close' [-Werror=implicit-function-declaration]",
            "https://github.com/NVIDIA/open-gpu-kernel-modules/issues/12 (kernel 5.17)",
        ),
        (
            "FATAL: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol 'paravirt_ops'",
            "composed: Linux 2.6-4.x scripts/mod/modpost.c check_for_gpl_usage (fatal) with a symbol those kernels "
            "made GPL-only",
        ),
        (
            "ERROR: modpost: GPL-incompatible module nvidia.ko uses GPL-only symbol '__rcu_read_lock'",
            "composed: Linux 5.x and later scripts/mod/modpost.c (error), a kernel that made an RCU symbol GPL-only",
        ),
        (
            "/usr/src/nvidia-470.57.02/kernel/nvidia-drm/nvidia-drm-fb.c:171:36: error: passing argument 2 of "
            "'drm_framebuffer_init' from incompatible pointer type [-Werror=incompatible-pointer-types]",
            "composed: GCC c-typeck (passing argument %d of %qE from incompatible pointer type) on a changed kernel "
            "function, C locale",
        ),
        (
            "/usr/src/nvidia-525.60.13/kernel/nvidia-drm/nvidia-drm-drv.c:240:25: error: "
            "\u2018struct drm_mode_config\u2019 has no member named \u2018fb_base\u2019",
            "composed: GCC c-typeck (%qT has no member named %qE) on a structure a newer kernel changed, UTF-8 quotes",
        ),
        (
            "nvidia-uvm/uvm_hmm.c:1901:38: error: incompatible type for argument 1 of \u2018migrate_vma_setup\u2019",
            "composed: GCC c-typeck (incompatible type for argument %d of %qE) on a changed kernel function",
        ),
    ],
    "driver-secure-boot": [
        (
            "ERROR: The kernel module failed to load, because it was not signed by a key that is trusted by the "
            "kernel. Please try installing the driver again, and sign the kernel module when prompted to do so.",
            "https://github.com/NVIDIA/gpu-operator/issues/266 (driver container log)",
        ),
        (
            "Kernel module load error: Required key not available",
            "composed: nvidia-installer's 'Kernel module load error: %s' with the kernel's EKEYREJECTED",
        ),
    ],
    "driver-module-load": [
        (
            "ERROR: Unable to load the kernel module 'nvidia.ko'.  This happens most frequently when this kernel "
            "module was built against the wrong or improperly configured kernel sources, with a version of gcc that "
            "differs from the one used to build the target kernel, or if another driver, such as nouveau, is present "
            "and prevents the NVIDIA kernel module from obtaining ownership of the NVIDIA GPU(s)",
            "https://github.com/NVIDIA/gpu-operator/issues/266 and #257 (driver container log; the line continues)",
        ),
    ],
    "driver-in-use": [
        (
            "Could not unload NVIDIA driver kernel modules, driver is in use",
            "https://github.com/NVIDIA/gpu-operator/issues/126 (driver container log)",
        ),
        (
            "time=2026-11-30T10:12:01Z level=warning msg=Failed to unload kernel module nvidia_uvm: resource "
            "temporarily unavailable",
            "composed: NVIDIA/k8s-driver-manager v0.9.0 on cmd/driver-manager/main.go unloadDriver (logrus text)",
        ),
        (
            "time=2026-11-30T10:12:01Z level=fatal msg=failed to uninstall nvidia driver components: failed to "
            "unload driver: device or resource busy",
            "composed: NVIDIA/k8s-driver-manager cleanupDriver (failed to unload driver: %w) with EBUSY",
        ),
    ],
    "driver-manager-drain": [
        (
            "error: cannot delete Pods with local storage (use --delete-emptydir-data to override): "
            "ml/notebook-0, ml/notebook-1",
            "composed: k8s-driver-manager v0.6 driver-manager _drain_k8s_node (kubectl drain's error)",
        ),
        (
            "Cannot proceed until all GPU pods are drained from the node. Exiting.",
            "composed: k8s-driver-manager v0.6.5 driver-manager (the main flow)",
        ),
        (
            "Cleanup could not automatically proceed on node gpu-1 because both GPU pod eviction and auto-drain "
            "are disabled.",
            "composed: k8s-driver-manager v0.12 cmd/driver-manager/messages.go",
        ),
    ],
    "driver-manager-nouveau": [
        ("Failed to unload nouveau driver", "composed: k8s-driver-manager v0.6.5 driver-manager _unload_nouveau"),
        (
            'time="2026-11-30T10:12:01Z" level=error msg="failed to unload nouveau driver: device or resource busy"',
            "composed: k8s-driver-manager v0.12 cmd/driver-manager/main.go (logrus text format)",
        ),
    ],
    "toolkit-config-version": [
        (
            'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-toolkit: unable to setup runtime: '
            'unable to load config: unable to load containerd config: unsupported config version: 3"',
            "composed: nvidia-container-toolkit v1.17.0 tools/container/nvidia-toolkit/run.go and "
            "pkg/config/engine/containerd/containerd.go",
        ),
    ],
    "toolkit-config-command": [
        (
            'time="2024-11-05T09:14:22Z" level=error msg="error running nvidia-toolkit: unable to determine runtime '
            "options: unable to load crio config: failed to run command chroot [/host crio status config]: exit "
            'status 127\\nfailed to run command chroot [/host crio-status config]: exit status 127"',
            "composed: nvidia-container-toolkit v1.17.0 tools/container/runtime/crio/crio.go GetLowlevelRuntimePaths, "
            "pkg/config/engine/crio/crio.go CommandLineSource (two commands, errors.Join) and "
            "pkg/config/toml/source-cli.go (logrus text format, the newline quoted)",
        ),
        (
            'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to determine '
            "runtime options: unable to load containerd config: failed to load config: failed to run command chroot "
            '[/host /usr/local/bin/containerd config dump]: exit status 1"',
            "composed: nvidia-container-toolkit v1.19 cmd/nvidia-ctk-installer/main.go and "
            "container/runtime/containerd/containerd.go GetLowlevelRuntimePaths with RUNTIME_CONFIG_SOURCE=command "
            "and RUNTIME_EXECUTABLE_PATH (logrus text format)",
        ),
    ],
    "toolkit-runtime-config": [
        (
            'time="2023-06-01T08:00:00Z" level=fatal msg="Error: unable to load config: failed to load config: '
            'open /runtime/config-dir/config.toml: permission denied"',
            "composed: nvidia-container-toolkit v1.13.5 tools/container/containerd/containerd.go main and Setup, "
            "internal/config/engine/containerd/option.go (logrus text format)",
        ),
        (
            'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to setup runtime: '
            "unable to load config: unable to load containerd config: failed to load config: "
            'open /runtime/config-dir/config.toml: permission denied"',
            "composed: nvidia-container-toolkit v1.19 cmd/nvidia-ctk-installer/main.go and "
            "container/runtime/containerd/containerd.go Setup, getRuntimeConfig (logrus text format)",
        ),
        (
            'time="2025-02-03T11:40:09Z" level=error msg="error running nvidia-toolkit: unable to determine runtime '
            "options: unable to load containerd config: failed to load config: failed to run command chroot "
            "[/host containerd config dump]: exit status 127\\nconfig file /runtime/config-dir/config.toml is a "
            'directory"',
            "composed: nvidia-container-toolkit v1.17.1 tools/container/runtime/containerd/containerd.go "
            "getRuntimeConfig, toml.LoadFirst(command, file) joining both errors (pkg/config/toml/list.go, "
            "source-file.go): the command fell back to a file that cannot be read",
        ),
        (
            'time="2024-08-20T07:31:44Z" level=fatal msg="error: unable to load config: failed to load config: '
            'read /runtime/config-dir/config.toml: is a directory"',
            "composed: nvidia-container-toolkit v1.16.2 tools/container/containerd/containerd.go main (error: %v) "
            "and Setup, pkg/config/engine/containerd/option.go loadConfig around go-toml v1 LoadFile (its "
            "is-a-directory check never fires: os.Stat of a directory returns no error)",
        ),
        (
            'time="2025-06-12T14:02:51Z" level=error msg="error running nvidia-toolkit: unable to determine runtime '
            "options: unable to load containerd config: failed to load config: failed to run command chroot "
            "[/host containerd config dump]: exit status 127\\nopen /runtime/config-dir/config.toml: "
            'permission denied"',
            "composed: nvidia-container-toolkit v1.17.5 tools/container/runtime/containerd/containerd.go "
            "GetLowlevelRuntimePaths, toml.LoadFirst(command, file) (pkg/config/toml/list.go) with go-toml v1.9.5 "
            "LoadFile's open error last (logrus text format, the newline quoted)",
        ),
    ],
    "toolkit-runtime-restart": [
        (
            'time="2022-06-01T08:00:00Z" level=fatal msg="Error: unable to signal containerd: unable to dial: '
            'dial unix /runtime/sock-dir/containerd.sock: connect: no such file or directory"',
            "composed: nvidia-container-toolkit v1.11.0 tools/container/containerd/containerd.go SignalContainerd",
        ),
        (
            'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to setup runtime: '
            "unable to restart containerd: unable to dial: dial unix /runtime/sock-dir/containerd.sock: connect: "
            'no such file or directory"',
            "composed: nvidia-container-toolkit v1.19 cmd/nvidia-ctk-installer/main.go, "
            "container/runtime/containerd/containerd.go Setup, containerd_linux.go (unable to dial)",
        ),
    ],
    "runtime-driver-root": [
        (
            "Failed: Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: "
            "runc create failed: unable to start container process: error during container init: error running hook "
            "#0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'\n"
            "nvidia-container-cli.real: initialization error: load library failed: libnvidia-ml.so.1: cannot open "
            "shared object file: no such file or directory: unknown",
            "https://github.com/NVIDIA/gpu-operator/issues/511 and #625 (the kubelet's Failed Event, as posted)",
        ),
        (
            "Failed: Error: failed to create shim task: OCI runtime create failed: runc create failed: unable to start "
            "container process: error during container init: error running hook #0: error running hook: exit status "
            "1, stdout: , stderr: Auto-detected mode as 'legacy'\nnvidia-container-cli: initialization error: load "
            "library failed: libnvidia-ml.so.1: cannot open shared object file: no such file or directory: unknown",
            "https://github.com/NVIDIA/nvidia-docker/issues/1711 (the runtime's error, as a kubelet Failed Event)",
        ),
    ],
    "runtime-not-configured": [
        (
            "FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get "
            'sandbox runtime: no runtime for "nvidia" is configured',
            "https://github.com/NVIDIA/gpu-operator/issues/413 (the Event's reason and message)",
        ),
        (
            "FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find "
            "runtime handler nvidia from runtime list map[runc:{/usr/bin/runc oci}]",
            "composed: cri-o v1.14 oci/oci.go ValidateRuntimeHandler (handler structs in the list)",
        ),
        (
            "FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find "
            "runtime handler nvidia from runtime list map[crun:0xc0001a6f00 runc:0xc0001a6fc0]",
            "composed: cri-o v1.30 internal/oci/oci.go ValidateRuntimeHandler (pointers in the list)",
        ),
    ],
    "device-plugin-inotify": [
        (
            "2022/11/14 14:40:53 Error: failed to create FS watcher: too many open files",
            "https://github.com/NVIDIA/gpu-operator/issues/441 (device plugin v0.12 log)",
        ),
        (
            "E1130 10:12:01.123456       1 main.go:132] error starting plugins: failed to create FS watcher for "
            "/var/lib/kubelet/device-plugins/: too many open files",
            "composed: k8s-device-plugin v0.17 cmd/nvidia-device-plugin/main.go start (klog format)",
        ),
    ],
    "device-plugin-mig-invalid": [
        (
            "panic: At least one device with migEnabled=true was not configured correctly: No MIG devices associated "
            "with /dev/nvidia0: GPU-2d9d6a1c-3b1f-3b7a-6a5e-8b1f0c0e5a11",
            "composed: k8s-device-plugin v0.12 cmd/nvidia-device-plugin/mig-strategy.go and internal/mig/mig.go",
        ),
        (
            "E1130 10:12:01.123456       1 main.go:132] error starting plugins: error getting plugins: "
            "unable to create plugins: failed to construct NVML resource managers: error building device map: "
            "error building device map from config.resources: invalid MIG configuration: "
            "at least one device with migEnabled=true was not configured correctly: "
            "error visiting device: device 0 has an invalid MIG configuration",
            "composed: k8s-device-plugin v0.17 internal/rm/device_map.go (klog format)",
        ),
    ],
    "device-plugin-nvml": [
        (
            "2021/05/01 10:00:00 Failed to initialize NVML: could not load NVML library.",
            "composed: k8s-device-plugin v0.9 main.go (log: Failed to initialize NVML: %v.)",
        ),
        (
            "2023/10/19 03:11:54 Failed to initialize NVML: could not load NVML library.",
            "https://github.com/NVIDIA/k8s-device-plugin/issues/444 (device plugin log)",
        ),
        (
            "E1130 10:12:01.000000       1 main.go:173] error starting plugins: error getting plugins: unable to "
            "create plugins: failed to construct resource managers: nvml init failed: ERROR_DRIVER_NOT_LOADED",
            "composed: k8s-device-plugin v0.16 internal/plugin/manager/factory.go (klog format)",
        ),
        (
            "E1130 10:12:01.000000       1 factory.go:99] Failed to initialize NVML: ERROR_LIBRARY_NOT_FOUND.",
            "composed: k8s-device-plugin v0.20 internal/plugin/factory.go (klog: Failed to initialize NVML: %v.) "
            "before libnvidia-ml loads",
        ),
    ],
    "device-plugin-no-runtime": [
        (
            "error starting plugins: error getting plugins: unable to create plugins: failed to construct resource "
            "managers: invalid device discovery strategy",
            "https://github.com/NVIDIA/k8s-device-plugin/issues/1470 (device plugin log)",
        ),
    ],
    "gfd-nodefeature-forbidden": [
        (
            'failed to create NodeFeature object "nvidia-features-for-node-gpu01": nodefeatures.nfd.k8s-sigs.io is '
            'forbidden: User "system:serviceaccount:node-feature-discovery:gpu-feature-discovery" cannot create '
            'resource "nodefeatures" in API group "nfd.k8s-sigs.io" in the namespace "node-feature-discovery"',
            "https://github.com/NVIDIA/gpu-feature-discovery/pull/51 (GFD v0.8 log)",
        ),
        (
            "E1130 10:12:01.123456       1 main.go:147] error running gfd: failed to create NodeFeature object "
            '"nvidia-features-for-gpu-1": nodefeatures.nfd.k8s-sigs.io "nvidia-features-for-gpu-1" is forbidden: '
            'User "system:serviceaccount:gpu-operator:nvidia-gpu-feature-discovery" cannot update resource '
            '"nodefeatures" in API group "nfd.k8s-sigs.io" in the namespace "gpu-operator"',
            "composed: k8s-device-plugin v0.17 internal/lm/output.go (an update refused; klog format)",
        ),
    ],
    "gfd-nvml": [
        (
            "W1130 10:12:01.123456       1 fallback.go:40] Failed to initialize resource manager: "
            "ERROR_LIBRARY_NOT_FOUND",
            "composed: k8s-device-plugin internal/resource/fallback.go withFallBack.Init (klog format)",
        ),
        (
            "gpu-feature-discovery: 2022/01/10 10:00:00 Error: error creating NVML labeler: failed to initialize "
            "NVML: could not load NVML library",
            "composed: gpu-feature-discovery v0.6.1 internal/lm/labeler.go and nvml.go (log format of v0.6)",
        ),
        (
            "2021/06/01 10:00:00 Warning: no labels generated from any source",
            "composed: gpu-feature-discovery v0.4.1 main.go (the lower-case wording before v0.8)",
        ),
    ],
    "validator-driver-not-ready": [
        (
            "driver is not ready",
            "composed: gpu-operator v1.9 validator/main.go Driver.validate (fmt.Println)",
        ),
        (
            'time="2025-04-24T07:21:08Z" level=warning '
            'msg="failed to validate the driver, retrying after 5 seconds\\n"',
            "https://github.com/cozystack/cozystack/pull/863 (toolkit's driver-validation init container)",
        ),
        (
            "[pod/nvidia-operator-validator-x1/driver-validation] chroot: failed to run command 'nvidia-smi': "
            "No such file or directory",
            "composed: gpu-operator v22.9 validator/main.go runCommandWithWait (kubectl logs --prefix)",
        ),
        (
            "stat: cannot stat '/run/nvidia/validations/.driver-ctr-ready': No such file or directory",
            "composed: gpu-operator v23.9 validator/main.go assertDriverContainerReady with an older coreutils stat",
        ),
    ],
    "validator-no-gpu-resources": [
        (
            'time="2026-11-30T10:12:01Z" level=info msg="Error: error validating plugin installation: '
            'GPU resources are not discovered by the node"',
            "composed: gpu-operator cmd/nvidia-validator/main.go main (Error: %v), Plugin.validateGPUResource",
        ),
        (
            'time="2026-11-30T10:12:06Z" level=info msg="GPU resources are not yet discovered by the node, retry: 2"',
            "composed: gpu-operator v26.7 cmd/nvidia-validator/main.go Plugin.validateGPUResource (Infof, the wait)",
        ),
        (
            'time="2021-07-21T18:19:50Z" level=info msg="GPU resources are not yet discovered by the node, retry: 30"',
            "composed: gpu-operator v1.7.0 validator/main.go Plugin.validateGPUResource (log.Infof, the last try)",
        ),
    ],
    "validator-cuda-workload": [
        (
            "Failed to allocate device vector A (error code no CUDA-capable device is detected)!",
            "https://github.com/NVIDIA/gpu-operator/issues/253 and #1900 (cuda-validation log)",
        ),
        (
            "Failed to allocate vector A (error code no CUDA-capable device is detected)!",
            "composed: the older vectorAdd's wording around a CUDA error",
        ),
    ],
    "mig-config-not-present": [
        (
            'time="2026-11-30T10:12:01Z" level=error msg="error selecting MIG config: selected mig-config not '
            'present: all-1g.10gb"',
            "composed: mig-parted cmd/nvidia-mig-parted/assert/assert.go AssertMigConfig and GetSelectedMigConfig",
        ),
    ],
    "mig-reset-refused": [
        (
            'time="2025-08-19T11:17:47Z" level=error msg="\\nResetting GPU 00000000:00:04.0 is not supported.\\n"',
            "https://github.com/NVIDIA/gpu-operator/issues/1606 (MIG manager log on a cloud VM)",
        ),
    ],
    "mig-reset-in-use": [
        (
            "The following GPUs could not be reset:",
            "https://github.com/NVIDIA/mig-parted/issues/181 (nvidia-mig-parted apply, nvidia_drm loaded)",
        ),
        (
            "GPU 00000000:C1:00.0 is currently in use by another process.",
            "https://github.com/NVIDIA/gpu-operator/issues/118 (nvidia-smi --gpu-reset, persistenced holding it)",
        ),
    ],
    "mig-manager-nvml": [
        (
            'time="2026-11-30T10:12:01Z" level=fatal msg="Error applying MIG configuration with hooks: error '
            'initializing NVML: ERROR_LIBRARY_NOT_FOUND"',
            "composed: mig-parted v0.15 cmd/nvidia-mig-parted/main.go (log.Fatal), apply/apply.go and apply/config.go "
            "ApplyMigConfig with go-nvml v0.13's name for a library it cannot load",
        ),
        (
            'time="2022-05-11T16:53:48Z" level=fatal msg="Error applying MIG configuration with hooks: error '
            'initializing NVML: Driver Not Loaded"',
            "composed: mig-parted v0.5 cmd/apply/apply.go and cmd/apply/mode.go ApplyMigMode with nvmlErrorString's "
            "words for NVML_ERROR_DRIVER_NOT_LOADED",
        ),
    ],
    "mig-apply-failed": [
        (
            "MIG mode change did not take effect after rebooting",
            "composed: mig-parted v0.10 deployments/container/reconfigure-mig.sh",
        ),
        (
            'time="2026-11-30T10:12:01Z" level=error msg="Error: failed to apply MIG configuration: exit status 1"',
            "composed: mig-parted v0.15 cmd/nvidia-mig-manager/main.go (Error: %s) and "
            "pkg/mig/reconfigure/reconfigure.go Reconfigure.Run",
        ),
        (
            'time="2024-02-13T10:21:20Z" level=fatal msg="Error applying MIG configuration with hooks: error '
            'resetting all GPUs: exit status 255"',
            "composed: mig-parted v0.10 cmd/nvidia-mig-parted/apply/apply.go and apply/mode.go ApplyMigMode "
            "(error resetting all GPUs: %v), the wrapper around an inner error other than NVML's start",
        ),
    ],
    "dcgm-exporter-hostengine": [
        (
            'time="2022-09-29T12:09:14Z" level=fatal msg="Error connecting to nv-hostengine: '
            'Host engine connection invalid/disconnected"',
            "https://github.com/NVIDIA/gpu-operator/issues/414 (dcgm-exporter log)",
        ),
        (
            'time=2026-11-30T10:12:01.123Z level=ERROR msg="Failed to connect to remote hostengine" '
            'address=10.0.0.7:5555 error="Host engine connection invalid/disconnected"',
            "composed: dcgm-exporter 4.x internal/pkg/dcgmprovider/dcgm.go (slog text format)",
        ),
        (
            'time="2021-03-01T10:00:00Z" level=error msg="Failed to collect metrics with error: Error getting the '
            'latest value for fields: Host engine connection invalid/disconnected"',
            "composed: dcgm-exporter 2.x pkg/dcgmexporter/pipeline.go with DCGM's connection error",
        ),
    ],
    "dcgm-exporter-profiling": [
        (
            'time="2023-08-01T02:47:46Z" level=fatal msg="Failed to watch metrics: Error watching fields: The '
            'third-party Profiling module returned an unrecoverable error"',
            "https://github.com/NVIDIA/dcgm-exporter/issues/148 (dcgm-exporter 3.1 log)",
        ),
        (
            'time=2026-11-30T10:12:01.123Z level=WARN msg="Failed to watch metrics: Error watching fields: The '
            'third-party Profiling module returned an unrecoverable error"',
            "composed: dcgm-exporter 4.x internal/pkg/collector/expcollector.go (slog text format)",
        ),
        (
            'time="2020-10-27T20:31:42Z" level=fatal msg="Error watching fields: This request is serviced by a '
            'module of DCGM that is not currently loaded"',
            "https://github.com/NVIDIA/gpu-monitoring-tools/issues/120 (dcgm-exporter 2.0 log)",
        ),
        (
            'time="2023-08-01T02:47:46Z" level=fatal msg="Failed to watch metrics: Error watching fields: Profiling '
            'is not supported for this group of GPUs or GPU"',
            "composed: dcgm-exporter 3.1 pkg/dcgmexporter/gpu_collector.go with DCGM's DCGM_ST_PROFILING_NOT_SUPPORTED",
        ),
    ],
    "dcgm-exporter-listen": [
        (
            'msg="Failed to Listen and Server HTTP server with err: `listen tcp: address 9400: missing port in '
            'address`"',
            "https://github.com/NVIDIA/gpu-monitoring-tools/issues/105 (dcgm-exporter 2.0 log)",
        ),
        (
            'time="2024-06-01T10:00:00Z" level=fatal msg="Failed to Listen and Server HTTP server." '
            'error="listen tcp :9400: bind: address already in use"',
            "composed: dcgm-exporter 3.3 pkg/dcgmexporter/server.go (logrus WithError)",
        ),
        (
            'time="2020-07-09T15:01:09Z" level=fatal msg="could not parse \\":9400\\" as int value for flag port: '
            'strconv.ParseInt: parsing \\":9400\\": invalid syntax"',
            "https://github.com/NVIDIA/gpu-monitoring-tools/issues/94 (dcgm-exporter 2.0 rc log)",
        ),
    ],
    "dcgm-exporter-nvml": [
        (
            'time="2020-07-21T18:49:33Z" level=fatal msg="Error starting nv-hostengine: DCGM initialization error"',
            "https://github.com/NVIDIA/gpu-monitoring-tools/issues/96 (dcgm-exporter log)",
        ),
        (
            'time=2026-11-30T10:12:01.000Z level=ERROR msg="Cannot init NVML library; err: ERROR_DRIVER_NOT_LOADED"',
            "composed: dcgm-exporter 4.x internal/pkg/nvmlprovider/provider.go (slog text format)",
        ),
    ],
    "dcgm-hostengine-start": [
        ("Err: Failed to start DCGM Server: -3", "composed: NVIDIA/DCGM hostengine main (printf %d) with a status"),
    ],
    "image-pull": [
        (
            'Failed: Failed to pull image "nvcr.io/nvidia/driver:550.54.15-ubuntu22.04": rpc error: code = NotFound '
            'desc = failed to pull and unpack image "nvcr.io/nvidia/driver:550.54.15-ubuntu22.04": not found',
            "composed: kubernetes pkg/kubelet/images/image_manager.go (Failed to pull image %q: %v) with containerd's "
            "not-found error",
        ),
    ],
}

_DRIVER_OK = [  # a driver pod that builds, loads and waits (NVIDIA/gpu-operator#15, #252, #302, #1244 as posted)
    "========== NVIDIA Software Installer ==========",
    "Starting installation of NVIDIA driver version 418.87.01 for Linux kernel version 5.0.0-36-generic",
    "Stopping NVIDIA persistence daemon...",
    "Unloading NVIDIA driver kernel modules...",
    "Checking NVIDIA driver packages...",
    "Updating the package cache...",
    "Ign:1 http://archive.ubuntu.com/ubuntu noble InRelease",
    # dnf 4 dnf/base.py fill_sack: a repository skipped (skip_if_unavailable=True) while the others load
    "Ignoring repositories: epel",
    "Last metadata expiration check: 0:00:03 ago on Thu May 21 15:19:43 2026.",
    "Resolving Linux kernel version...",
    "Proceeding with Linux kernel version 5.0.0-36-generic",
    "Installing Linux kernel headers...",
    "Generating Linux kernel version string...",
    "Compiling NVIDIA driver kernel modules...",
    '/usr/src/nvidia-470.57.02/kernel/common/inc/nv-list-helpers.h:81:0: warning: "hlist_entry_safe" redefined '
    "[enabled by default]",
    # gcc's warning form of an implicit declaration (older compilers, -Wno-error): the module still builds
    "nv-caps.c:567:5: warning: implicit declaration of function 'sys_close' [-Wimplicit-function-declaration]",
    # and of an incompatible pointer (a build without -Werror for it): the module still builds
    "/usr/src/nvidia-470.57.02/kernel/nvidia/os-mlock.c:88:29: warning: passing argument 1 of 'get_user_pages' "
    "from incompatible pointer type [-Wincompatible-pointer-types]",
    "Relinking NVIDIA driver kernel modules...",
    "Loading ipmi and i2c_core kernel modules...",
    "Loading NVIDIA driver kernel modules...",
    "Cleaning up the package cache...",
    "RHEL VERSION successfully resolved from kernel: 8.6",  # rhel8/nvidia-driver _resolve_rhel_version
    # rhel8|rhel9|rhel10/nvidia-driver _mount_rootfs on an SELinux node, where chcon relabels the driver's /dev quietly
    "Check SELinux status",
    "SELinux is enabled",
    "Change device files security context for selinux compatibility",
    # k8s-driver-manager (v0.6.5 driver-manager, v0.12 main.go) doing its work
    "Draining node gpu-1 of any GPU pods...",
    "Auto drain of the node gpu-1 is disabled",
    "Unloading nouveau driver...",
    "Successfully unloaded nouveau driver",
    "nvidia driver module is already loaded with refcount 236",
    "Done, now waiting for signal",
    # k8s-driver-manager v0.9 on (cmd/driver-manager/main.go): the ordinary unload of an idle driver
    "time=2026-11-30T10:12:01Z level=info msg=Cleaning up NVIDIA driver",
    "time=2026-11-30T10:12:01Z level=info msg=Unloading NVIDIA driver kernel modules",
    # a module built on a kernel whose modpost only warns (unsigned or tainted module)
    "WARNING: modpost: missing MODULE_LICENSE() in /usr/src/nvidia-550.54.15/kernel/nvidia-peermem.o",
]
_TOOLKIT_OK = [  # nvidia-container-toolkit v1.17 Info lines (tools/container/runtime) and #448 as posted
    'time="2026-11-30T10:12:01Z" level=info msg="Starting \'setup\' for nvidia-toolkit"',
    'time="2026-11-30T10:12:01Z" level=info msg="Loading config from /runtime/config-dir/config.toml"',
    'time="2026-11-30T10:12:01Z" level=info msg="Config file does not exist; using empty config"',
    'time="2026-11-30T10:12:01Z" level=info msg="Using config version 3"',  # v1.17.4+ reads containerd 2's
    'time="2026-11-30T10:12:01Z" level=info msg="Sending SIGHUP signal to containerd"',
    'time="2026-11-30T10:12:01Z" level=info msg="Successfully signaled containerd"',
    'time="2022-11-24T02:13:36Z" level=info msg="Skipping library candidate '
    "'/run/nvidia/driver/usr/lib64/libnvidia-ml.so': error resolving link "
    "'/run/nvidia/driver/usr/lib64/libnvidia-ml.so': lstat /run/nvidia/driver/usr/lib64/libnvidia-ml.so: "
    'no such file or directory"',
    'time="2022-11-24T02:13:36Z" level=info msg="Using library root /run/nvidia/driver/usr/lib/x86_64-linux-gnu"',
    'time="2026-11-30T10:12:01Z" level=info msg="Waiting for signal"',
    # after GetLowlevelRuntimePaths read the runtime's config (v1.17 tools/container/toolkit/toolkit.go Install)
    'time="2026-11-30T10:12:01Z" level=info msg="Installing NVIDIA container toolkit to \'/usr/local/nvidia/toolkit\'"',
    # a near miss of toolkit-runtime-config: the wrapper around an inner error that is not the file's (v1.19
    # pkg/config/engine/containerd/containerd.go parseVersion), an unknown failure whose lines are shown
    'time="2026-11-30T10:12:01Z" level=error msg="error running nvidia-ctk-installer: unable to determine runtime '
    'options: unable to load containerd config: failed to parse config version: unsupported type for version field: 2"',
]
_PLUGIN_OK = [  # k8s-device-plugin v0.14 (NVIDIA/k8s-device-plugin#406 as posted) and v0.20 Info lines
    "I1113 09:15:44.110759       1 main.go:154] Starting FS watcher.",
    "I1113 09:15:44.110825       1 main.go:161] Starting OS watcher.",
    "I1113 09:15:44.111097       1 main.go:176] Starting Plugins.",
    "I1113 09:15:44.111107       1 main.go:234] Loading configuration.",
    "I1130 10:12:01.000000       1 main.go:272] Starting FS watcher for /var/lib/kubelet/device-plugins",
    "I1130 10:12:01.000000       1 main.go:300] inotify: /var/lib/kubelet/device-plugins/kubelet.sock created, "
    "restarting.",
    "2021/05/01 10:00:00 No MIG devices found. Falling back to mig.strategy=none",
    "I1130 10:12:01.000000       1 server.go:165] Starting GRPC server for 'nvidia.com/gpu'",
    "I1130 10:12:01.000000       1 server.go:117] Starting to serve 'nvidia.com/gpu' on "
    "/var/lib/kubelet/device-plugins/nvidia-gpu.sock",
    "I1130 10:12:01.000000       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' with Kubelet",
    "I1130 10:12:01.000000       1 main.go:300] Failed to start one or more plugins. Retrying in 30s...",
    # near miss: NVML is there but its init fails for another reason (NVML_ERROR_UNKNOWN): not the missing library
    "E1130 10:12:01.000000       1 factory.go:99] Failed to initialize NVML: Unknown Error.",
]
_GFD_OK = [  # k8s-device-plugin v0.20 cmd/gpu-feature-discovery and internal/lm/output.go Info lines
    "I1130 10:12:01.000000       1 main.go:163] Start running",
    "I1130 10:12:01.000000       1 main.go:235] Creating Labels",
    "I1130 10:12:01.000000       1 output.go:137] creating NodeFeature object nvidia-features-for-gpu-1",
    "I1130 10:12:01.000000       1 output.go:170] Updating NodeFeature object nvidia-features-for-gpu-1",
    "I1130 10:12:01.000000       1 output.go:175] no changes in NodeFeature object nvidia-features-for-gpu-1",
    "I1130 10:12:01.000000       1 main.go:290] Sleeping for 60000000000",
]
_VALIDATOR_OK = [  # gpu-operator v26.7 cmd/nvidia-validator (a retry that then succeeds; GDS and peermem lines)
    'time="2026-11-30T10:12:01Z" level=info msg="Attempting to validate a pre-installed driver on the host"',
    'time="2026-11-30T10:12:01Z" level=info msg="Attempting to validate a driver container installation"',
    "nvidia-fs driver is not ready",
    # v24.9 to v26.7: the driver container check, before the stat that succeeds
    'time="2026-11-30T10:12:01Z" level=info msg="Driver is not pre-installed on the host and is managed by GPU '
    'Operator. Checking driver container status."',
    "running command bash with args [-c stat /run/nvidia/validations/.driver-ctr-ready]",
    'time="2026-11-30T10:12:01Z" level=info msg="gdrcopy driver is not ready"',
    'time="2026-11-30T10:12:01Z" level=info msg="nvidia-peermem driver is not ready"',
    'time="2026-11-30T10:12:01Z" level=info msg="Validation completed successfully - vGPU devices present on the host"',
    # v1.7.0 to v26.7 Plugin.validateGPUResource when the device plugin has registered the GPUs (debug level)
    'time="2026-11-30T10:12:11Z" level=debug msg="Found GPU resource name nvidia.com/gpu quantity 8"',
    'time="2026-11-30T10:12:11Z" level=debug msg="Found MIG GPU resource name nvidia.com/mig-1g.10gb quantity 7"',
]
_MIG_OK = [  # mig-parted v0.15 (NVIDIA/gpu-operator#1606 and #668 as posted, up to the failure)
    'time="2025-08-19T11:17:35Z" level=debug msg="Walking MigConfig for (devices=all)"',
    'time="2025-08-19T11:17:38Z" level=debug msg="    Updating MIG mode: Enabled"',
    'time="2025-08-19T11:17:38Z" level=debug msg="    Mode change pending: true"',
    'time="2025-08-19T11:17:39Z" level=debug msg="At least one mode change pending"',
    'time="2025-08-19T11:17:39Z" level=debug msg="Resetting all GPUs..."',
    'time="2026-02-27T16:54:19Z" level=info msg="Waiting for change to \'nvidia.com/mig.config\' label"',
    "Asserting that the requested configuration is present in the configuration file",
    "Applying the MIG mode change from the selected config to the node (and double checking it took effect)",
    "Changing the 'nvidia.com/mig.config.state' node label to 'pending'",
    # mig-parted apply.go around NVML failing to start with a return that is not a missing library or driver (an
    # internal driver error): neither mig-manager-nvml's cause nor mig-apply-failed's, so no cause is named
    'time="2026-11-30T10:12:01Z" level=fatal msg="Error applying MIG configuration with hooks: error initializing '
    'NVML: Unknown Error"',
]
_DCGM_OK = [  # dcgm-exporter 3.1 (NVIDIA/dcgm-exporter#148 as posted, before the failure) and 3.3 Info lines
    'time="2023-08-01T02:47:12Z" level=info msg="Starting dcgm-exporter"',
    'time="2023-08-01T02:47:13Z" level=info msg="DCGM successfully initialized!"',
    'time="2023-08-01T02:47:13Z" level=info msg="Collecting DCP Metrics"',
    # pkg/cmd/app.go (3.3): the exporter goes on without DCP metrics (the inner error here is illustrative)
    'time="2023-08-01T02:47:13Z" level=info msg="Not collecting DCP metrics: profiling is not supported on this GPU"',
    'time="2023-08-01T02:47:13Z" level=info msg="Initializing system entities of type: GPU"',
    'time="2026-11-30T10:12:01Z" level=info msg="Attempting to connect to remote hostengine at 10.0.0.7:5555"',
    'time="2026-11-30T10:12:01Z" level=info msg="Starting webserver"',
    # pkg/cmd/app.go: DCGM's own words for a GPU without DCP support, on the info line that skips them
    'time="2024-05-24T04:53:22Z" level=info msg="Not collecting DCP metrics: Error getting supported metrics: '
    'Profiling is not supported for this group of GPUs or GPU"',
]
_HOSTENGINE_OK = [  # nv-hostengine in the nvidia-dcgm pod (NVIDIA/DCGM hostengine main) and the runtime wrapper
    "Started host engine version 4.4.2 using port number: 5555",
    "Host engine already running with pid 12",
    "2024-02-16 08:59:03.773 WARN  [91:93] Skipping loading of module 8 in status 2",
]
_EVENTS_OK = [  # the kubelet's ordinary Events on an operand pod
    'Pulled: Container image "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v22.9.0" already present on machine',
    "Created: Created container driver-validation",
    "Started: Started container nvidia-container-toolkit-ctr",
    'Pulling: Pulling image "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"',
    "Scheduled: Successfully assigned gpu-operator/nvidia-operator-validator-v8xn9 to gpu-1",
    # cri-o internal/oci/oci.go: a handler other than nvidia missing (a sandbox runtime class), not this cause
    "FailedCreatePodSandBox: Failed to create pod sandbox: rpc error: code = Unknown desc = failed to find runtime "
    "handler runsc from runtime list map[crun:0xc0001a6f00 runc:0xc0001a6fc0]",
    # https://github.com/NVIDIA/gpu-operator/issues/443: a runtime error that is not a driver root (SELinux, SLES)
    "Failed: Error: failed to create containerd task: failed to create shim task: OCI runtime create failed: runc "
    "create failed: unable to start container process: error during container init: error running hook #0: error "
    "running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy' nvidia-container-cli.real: "
    "initialization error: nvml error: insufficient permissions: unknown",
]

# operand -> ordinary lines of a healthy (or recovering) pod that must name no cause; "*": Events
TWINS: dict[str, list[str]] = {
    "driver": _DRIVER_OK,
    "container-toolkit": _TOOLKIT_OK,
    "device-plugin": _PLUGIN_OK,
    "gpu-feature-discovery": _GFD_OK,
    "operator-validator": _VALIDATOR_OK,
    "mig-manager": _MIG_OK,
    "dcgm-exporter": _DCGM_OK,
    "dcgm": _HOSTENGINE_OK,
    "*": _EVENTS_OK,
}
