{{/*
Names and labels shared by the templates. The full name is the release name when that already
names the chart (`helm install agent-upgrade-controller …` gives the objects the names of the
shipped manifests), else <release>-agent-upgrade-controller.
*/}}
{{- define "auc.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "auc.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "auc.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "auc.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{/* The pods' selector: stable for the release's life (a Deployment's selector is immutable). */}}
{{- define "auc.selectorLabels" -}}
app.kubernetes.io/name: {{ include "auc.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "auc.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "auc.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: agent-upgrade
{{- end }}

{{/* Where the Lease lives, and so the Role that grants it. */}}
{{- define "auc.leaseNamespace" -}}
{{- default .Release.Namespace .Values.leaderElection.namespace }}
{{- end }}

{{/* The mounted --config file and its root.json, and trust.cacheDir's default (an emptyDir). */}}
{{- define "auc.configDir" -}}/etc/agent-upgrade-controller{{- end }}
{{- define "auc.stateDir" -}}/var/lib/agent-upgrade-controller{{- end }}

{{/* The controller's --config file (docs/configuration.md#the-controllers-configuration). */}}
{{- define "auc.trustConfig" -}}
{{- $trust := dict "mode" "tuf" "rootFile" (printf "%s/root.json" (include "auc.configDir" .)) "metadataUrl" .Values.trust.metadataUrl "targetsUrl" .Values.trust.targetsUrl }}
{{- with .Values.trust.mirrors }}
{{- $_ := set $trust "mirrors" . }}
{{- end }}
{{- $config := dict "trust" $trust }}
{{- with .Values.trust.artifact }}
{{- $_ := set $config "artifact" . }}
{{- end }}
{{- toPrettyJson $config }}
{{- end }}
