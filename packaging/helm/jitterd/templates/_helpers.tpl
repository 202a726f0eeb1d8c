{{- define "jitterd.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "jitterd.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "jitterd.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jitterd.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "jitterd.labels" -}}
{{ include "jitterd.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* A file name as a Kubernetes object name suffix: lower case, [a-z0-9-]. */}}
{{- define "jitterd.fileSuffix" -}}
{{- $stem := base . | trimSuffix (ext .) | lower -}}
{{- regexReplaceAll "[^a-z0-9-]+" $stem "-" | trimAll "-" -}}
{{- end -}}
