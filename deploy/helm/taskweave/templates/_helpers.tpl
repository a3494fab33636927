{{- define "taskweave.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "taskweave.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* selector labels of one component (api, worker, migrate) */}}
{{- define "taskweave.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "taskweave.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "taskweave.secretName" -}}
{{- .Values.secrets.existingSecret | default (include "taskweave.fullname" .) -}}
{{- end -}}

{{/* the JWT secret: given, kept from the installed Secret, or a new random one */}}
{{- define "taskweave.jwtSecret" -}}
{{- if .Values.secrets.values.TW_JWT_SECRET -}}
{{- .Values.secrets.values.TW_JWT_SECRET -}}
{{- else -}}
{{- $old := lookup "v1" "Secret" .Release.Namespace (include "taskweave.fullname" .) -}}
{{- if and $old $old.data (hasKey $old.data "TW_JWT_SECRET") -}}
{{- index $old.data "TW_JWT_SECRET" | b64dec -}}
{{- else -}}
{{- randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* the Secret's stringData: every non-empty secret value, the JWT secret always */}}
{{- define "taskweave.secretData" -}}
{{- range $k, $v := .Values.secrets.values }}
{{- if and $v (ne $k "TW_JWT_SECRET") }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end }}
TW_JWT_SECRET: {{ include "taskweave.jwtSecret" . | quote }}
{{- end -}}

{{/* the ConfigMap's data: every non-empty config value; the attachment directory is
the pods' mount and the pool size is per process (taskweave.env) */}}
{{- define "taskweave.configData" -}}
{{- range $k, $v := .Values.config }}
{{- if and (ne (toString $v) "") (ne $k "TW_ATTACHMENTS_DIR") (ne $k "TW_DATABASE_MAX_CONNS") }}
{{ $k }}: {{ $v | toString | quote }}
{{- end }}
{{- end }}
TW_ATTACHMENTS_DIR: /var/lib/taskweave/attachments
{{- end -}}

{{/* environment of every Taskweave container; $maxConns is the pool size */}}
{{- define "taskweave.env" -}}
envFrom:
  - configMapRef:
      name: {{ .name }}
  - secretRef:
      name: {{ .secret }}
env:
  - name: TW_DATABASE_MAX_CONNS
    value: {{ .maxConns | toString | quote }}
{{- end -}}

{{- define "taskweave.attachmentsVolume" -}}
- name: attachments
{{- if .Values.attachments.existingClaim }}
  persistentVolumeClaim:
    claimName: {{ .Values.attachments.existingClaim }}
{{- else }}
  emptyDir: {}
{{- end }}
{{- end -}}
