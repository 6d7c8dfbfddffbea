{{/* Names and labels shared by every resource. */}}

{{- define "vigil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Release-scoped base name. Resources append up to "-moderator-headless" (19 characters) and Service names must
stay within 63, hence 44. */}}
{{- define "vigil.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 44 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 44 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 44 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "vigil.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "vigil.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vigil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vigil.labels" -}}
helm.sh/chart: {{ include "vigil.chart" . }}
{{ include "vigil.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: vigil
{{- end -}}

{{/* Labels of one service's resources. Call with (dict "root" $ "name" "gateway"). */}}
{{- define "vigil.componentSelectorLabels" -}}
{{ include "vigil.selectorLabels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "vigil.componentLabels" -}}
{{ include "vigil.labels" .root }}
app.kubernetes.io/component: {{ .name }}
{{- end -}}

{{- define "vigil.image" -}}
{{- $image := .image -}}
{{- printf "%s:%s" $image.repository (default .root.Chart.AppVersion $image.tag) -}}
{{- end -}}

{{/* Name of the Secret and key holding the MongoDB connection string. */}}
{{- define "vigil.mongoSecretRef" -}}
{{- if .Values.mongo.existingSecret -}}
name: {{ .Values.mongo.existingSecret }}
key: {{ .Values.mongo.existingSecretKey }}
{{- else -}}
name: {{ include "vigil.fullname" . }}-mongo
key: MONGO_URL
{{- end -}}
{{- end -}}

{{/* Name of the Secret and key holding the moderator's gRPC token. */}}
{{- define "vigil.moderatorTokenSecretRef" -}}
{{- if .Values.moderatorAuth.existingSecret -}}
name: {{ .Values.moderatorAuth.existingSecret }}
key: {{ .Values.moderatorAuth.existingSecretKey }}
{{- else -}}
name: {{ include "vigil.fullname" . }}-moderator-token
key: MODERATOR_GRPC_TOKEN
{{- end -}}
{{- end -}}

{{/* Name of the Secret and key holding SECRETS_ENCRYPTION_KEY. */}}
{{- define "vigil.secretsEncryptionSecretRef" -}}
{{- if .Values.secretsEncryption.existingSecret -}}
name: {{ .Values.secretsEncryption.existingSecret }}
key: {{ .Values.secretsEncryption.existingSecretKey }}
{{- else -}}
name: {{ include "vigil.fullname" . }}-secrets-encryption
key: SECRETS_ENCRYPTION_KEY
{{- end -}}
{{- end -}}

{{/* Fails the render early instead of shipping pods that crash on a missing address. */}}
{{- define "vigil.validate" -}}
{{- if not (or .Values.mongo.url .Values.mongo.existingSecret) -}}
{{- fail "set mongo.url or mongo.existingSecret: MongoDB is external to this chart" -}}
{{- end -}}
{{- if not (or .Values.kafka.brokers .Values.kafka.existingSecret) -}}
{{- fail "set kafka.brokers or kafka.existingSecret: Kafka is external to this chart" -}}
{{- end -}}
{{- if le (int .Values.terminationGracePeriodSeconds) (div (int .Values.shutdownTimeoutMs) 1000) -}}
{{- fail "terminationGracePeriodSeconds must exceed shutdownTimeoutMs, or Kubernetes kills pods mid-drain" -}}
{{- end -}}
{{- range $name := list "moderator" "notifier" -}}
{{- $autoscaling := (index $.Values.services $name).autoscaling -}}
{{- if and $autoscaling.kafkaLag.enabled (not $autoscaling.enabled) -}}
{{- fail (printf "services.%s.autoscaling.kafkaLag.enabled needs services.%s.autoscaling.enabled too" $name $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* KAFKA_BROKERS as a container env entry: from the existing Secret, else by value. */}}
{{- define "vigil.kafkaBrokersEnv" -}}
- name: KAFKA_BROKERS
{{- if .Values.kafka.existingSecret }}
  valueFrom:
    secretKeyRef:
      name: {{ .Values.kafka.existingSecret }}
      key: {{ .Values.kafka.existingSecretKey }}
{{- else }}
  value: {{ .Values.kafka.brokers | quote }}
{{- end }}
{{- end -}}

{{- define "vigil.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: {{ .Values.tmpSizeLimit }}
{{- end -}}

{{/* The Kafka consumer group of a service and the topics it reads, as the service itself names them: the group is
KAFKA_GROUP_ID (default vigil-<service>, see <service>/src/config.ts), the topics come from proto/src/topics.ts under
KAFKA_TOPIC_PREFIX. Call with (dict "root" $ "name" "moderator"); renders YAML (group, topics), empty for the
gateway. */}}
{{- define "vigil.consumer" -}}
{{- $svc := index .root.Values.services .name -}}
{{- $prefix := default .root.Values.kafka.topicPrefix (index $svc.env "KAFKA_TOPIC_PREFIX") -}}
{{- $topics := dict
  "moderator" (list "vigil.ingest.v1")
  "notifier" (list "vigil.events.v1" "vigil.webhook-commands.v1")
-}}
{{- if hasKey $topics .name }}
group: {{ default (printf "vigil-%s" .name) (index $svc.env "KAFKA_GROUP_ID") | quote }}
topics:
{{- range index $topics .name }}
  - {{ printf "%s%s" $prefix . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Fewest pods a service runs: autoscaling's minimum when it scales, else its replicas. Call with
(dict "root" $ "name" "moderator"). */}}
{{- define "vigil.minReplicas" -}}
{{- $svc := index .root.Values.services .name -}}
{{- if $svc.autoscaling.enabled -}}
{{- $svc.autoscaling.minReplicas -}}
{{- else -}}
{{- $svc.replicas -}}
{{- end -}}
{{- end -}}
