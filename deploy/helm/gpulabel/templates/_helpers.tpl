{{/* Labels of every object: the same two labels deploy/base uses, so selectors match both installs. */}}
{{- define "gpulabel.labels" -}}
app.kubernetes.io/name: gpulabel
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end -}}

{{- define "gpulabel.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "gpulabel.featureFilesConfigMap" -}}
{{ .Values.featureFiles.existingConfigMap | default "gpulabel-feature-files" }}
{{- end -}}

{{/* A ServiceAccount, ClusterRole and ClusterRoleBinding; args: root context, use name, rules. */}}
{{- define "gpulabel.rbac" -}}
apiVersion: v1
kind: ServiceAccount
metadata:
  name: gpulabel-{{ .use }}
  namespace: {{ .root.Release.Namespace }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: gpulabel-{{ .use }}
rules:
{{ toYaml .rules }}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: gpulabel-{{ .use }}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: gpulabel-{{ .use }}
subjects:
  - kind: ServiceAccount
    name: gpulabel-{{ .use }}
    namespace: {{ .root.Release.Namespace }}
{{- end -}}
