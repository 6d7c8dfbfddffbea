{{/*
One service's resources: ConfigMap, Deployment, Service and, when enabled, HorizontalPodAutoscaler (or KEDA
ScaledObject) and PodDisruptionBudget. Called once per service with (dict "root" $ "name" "<service>"); the service's
values live under .Values.services.<service>. Every port in `ports` becomes a named container port, a Service port and
the variable <NAME>_PORT; the `admin` port carries the probes and /metrics.
*/}}

{{- define "vigil.workload.env" -}}
{{- $root := .root -}}
{{- $svc := index $root.Values.services .name -}}
{{- $env := dict
  "LOG_LEVEL" $root.Values.logLevel
  "MONGO_DB" $root.Values.mongo.database
  "KAFKA_TOPIC_PREFIX" $root.Values.kafka.topicPrefix
  "SHUTDOWN_TIMEOUT_MS" (toString (int $root.Values.shutdownTimeoutMs))
  "KAFKA_TOPIC_PARTITIONS" (toString (int $root.Values.topics.partitions))
-}}
{{- if not $root.Values.kafka.existingSecret -}}
{{- $_ := set $env "KAFKA_BROKERS" $root.Values.kafka.brokers -}}
{{- end -}}
{{- range $port, $number := $svc.ports -}}
{{- $_ := set $env (printf "%s_PORT" (upper $port)) (toString (int $number)) -}}
{{- end -}}
{{- if $svc.maxOldSpaceMB -}}
{{- $_ := set $env "NODE_OPTIONS" (printf "--max-old-space-size=%d" (int $svc.maxOldSpaceMB)) -}}
{{- end -}}
{{- if eq .name "gateway" -}}
{{- /* Through the headless Service every moderator pod is an address: the gateway's round-robin client spreads calls
     over them and skips a dead one. Through the ClusterIP a gateway's calls stick to one pod. */ -}}
{{- if $root.Values.services.moderator.service.headless -}}
{{- $_ := set $env "MODERATOR_ADDRESS" (printf "dns:///%s-moderator-headless:%d" (include "vigil.fullname" $root) (int $root.Values.services.moderator.ports.grpc)) -}}
{{- else -}}
{{- $_ := set $env "MODERATOR_ADDRESS" (printf "%s-moderator:%d" (include "vigil.fullname" $root) (int $root.Values.services.moderator.ports.grpc)) -}}
{{- end -}}
{{- end -}}
{{- toYaml (merge (deepCopy $svc.env) $env) -}}
{{- end -}}

{{- define "vigil.workload.configmap" -}}
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ include "vigil.fullname" .root }}-{{ .name }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
data:
  {{- include "vigil.workload.env" . | nindent 2 }}
{{- end -}}

{{- define "vigil.workload" -}}
{{- $root := .root -}}
{{- $name := .name -}}
{{- $svc := index $root.Values.services $name -}}
{{- $fullname := printf "%s-%s" (include "vigil.fullname" $root) $name -}}
{{- $configmap := include "vigil.workload.configmap" . -}}
---
{{ $configmap }}
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  {{- if not $svc.autoscaling.enabled }}
  replicas: {{ $svc.replicas }}
  {{- end }}
  revisionHistoryLimit: 5
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxUnavailable: 0
      maxSurge: 1
  selector:
    matchLabels:
      {{- include "vigil.componentSelectorLabels" . | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "vigil.componentSelectorLabels" . | nindent 8 }}
      annotations:
        {{- /* A changed configuration rolls the pods: the services read their environment once at start. A token
        or key given as a value counts; a generated one is left out, since `helm template` renders a new one each time. */}}
        {{- $token := "" }}
        {{- if or (eq $name "gateway") (eq $name "moderator") }}
        {{- $token = $root.Values.moderatorAuth.token }}
        {{- end }}
        {{- $token = printf "%s%s" $token $root.Values.secretsEncryption.key }}
        checksum/config: {{ printf "%s%s%s" $configmap (include "vigil.mongoSecret" $root) $token | sha256sum }}
        {{- with $svc.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      automountServiceAccountToken: false
      {{- /* Service links would inject variables such as GRPC_PORT=tcp://… for any Service named "grpc" in the
      namespace, colliding with the services' own configuration. */}}
      enableServiceLinks: false
      terminationGracePeriodSeconds: {{ $root.Values.terminationGracePeriodSeconds }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      containers:
        - name: {{ $name }}
          image: {{ include "vigil.image" (dict "root" $root "image" $svc.image) | quote }}
          imagePullPolicy: {{ $svc.image.pullPolicy }}
          ports:
            {{- range $port, $number := $svc.ports }}
            - name: {{ $port }}
              containerPort: {{ $number }}
              protocol: TCP
            {{- end }}
          envFrom:
            - configMapRef:
                name: {{ $fullname }}
            {{- range $svc.envFromSecret }}
            - secretRef:
                name: {{ . }}
            {{- end }}
          env:
            - name: MONGO_URL
              valueFrom:
                secretKeyRef:
                  {{- include "vigil.mongoSecretRef" $root | nindent 18 }}
            {{- if $root.Values.kafka.existingSecret }}
            {{- include "vigil.kafkaBrokersEnv" $root | nindent 12 }}
            {{- end }}
            {{- if or (eq $name "gateway") (eq $name "moderator") }}
            - name: MODERATOR_GRPC_TOKEN
              valueFrom:
                secretKeyRef:
                  {{- include "vigil.moderatorTokenSecretRef" $root | nindent 18 }}
            {{- end }}
            - name: SECRETS_ENCRYPTION_KEY
              valueFrom:
                secretKeyRef:
                  {{- include "vigil.secretsEncryptionSecretRef" $root | nindent 18 }}
          livenessProbe:
            httpGet:
              path: /livez
              port: admin
            periodSeconds: 10
            timeoutSeconds: 3
            failureThreshold: 3
          readinessProbe:
            httpGet:
              path: /readyz
              port: admin
            periodSeconds: 5
            timeoutSeconds: 3
            failureThreshold: 2
          {{- /* Start-up waits for Kafka and MongoDB; give it a minute before liveness counts. */}}
          startupProbe:
            httpGet:
              path: /livez
              port: admin
            periodSeconds: 2
            failureThreshold: 30
          resources:
            {{- toYaml $svc.resources | nindent 12 }}
          securityContext:
            {{- toYaml $root.Values.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        {{- include "vigil.tmpVolume" $root | nindent 8 }}
      {{- with $svc.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $svc.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- /* A service's own constraints replace the chart's; `topologySpread.enabled: false` and none drop them. */}}
      {{- if $svc.topologySpreadConstraints }}
      topologySpreadConstraints:
        {{- toYaml $svc.topologySpreadConstraints | nindent 8 }}
      {{- else if $root.Values.topologySpread.enabled }}
      topologySpreadConstraints:
        {{- range $root.Values.topologySpread.topologyKeys }}
        - topologyKey: {{ . }}
          maxSkew: {{ $root.Values.topologySpread.maxSkew }}
          whenUnsatisfiable: {{ $root.Values.topologySpread.whenUnsatisfiable }}
          labelSelector:
            matchLabels:
              {{- include "vigil.componentSelectorLabels" $ | nindent 14 }}
          {{- /* Counts the pods of one ReplicaSet only, so a rolling upgrade spreads the new pods too. */}}
          matchLabelKeys: [pod-template-hash]
        {{- end }}
      {{- end }}
---
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  type: {{ $svc.service.type }}
  selector:
    {{- include "vigil.componentSelectorLabels" . | nindent 4 }}
  ports:
    {{- range $port, $number := $svc.ports }}
    - name: {{ $port }}
      port: {{ $number }}
      targetPort: {{ $port }}
      protocol: TCP
      {{- if eq $port "grpc" }}
      appProtocol: grpc
      {{- else }}
      appProtocol: http
      {{- end }}
    {{- end }}
{{- if $svc.service.headless }}
---
{{- /* One DNS record per ready pod, for gRPC clients that balance across pods themselves (HTTP/2 connections are
long-lived: through the ClusterIP Service each client sticks to one pod). */}}
apiVersion: v1
kind: Service
metadata:
  name: {{ $fullname }}-headless
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  clusterIP: None
  selector:
    {{- include "vigil.componentSelectorLabels" . | nindent 4 }}
  ports:
    {{- range $port, $number := $svc.ports }}
    {{- if ne $port "admin" }}
    - name: {{ $port }}
      port: {{ $number }}
      targetPort: {{ $port }}
      protocol: TCP
    {{- end }}
    {{- end }}
{{- end }}
{{- $lag := dig "kafkaLag" "enabled" false $svc.autoscaling }}
{{- if and $svc.autoscaling.enabled (not $lag) }}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $fullname }}
  minReplicas: {{ $svc.autoscaling.minReplicas }}
  maxReplicas: {{ $svc.autoscaling.maxReplicas }}
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $svc.autoscaling.targetCPUUtilizationPercentage }}
{{- end }}
{{- if and $svc.autoscaling.enabled $lag }}
---
{{- /* KEDA owns the HPA of this Deployment (keda-hpa-<name>): lag of each topic the service reads, and CPU. */}}
{{- $consumer := include "vigil.consumer" . | fromYaml }}
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ $fullname }}
  pollingInterval: {{ $svc.autoscaling.kafkaLag.pollingInterval }}
  minReplicaCount: {{ $svc.autoscaling.minReplicas }}
  maxReplicaCount: {{ $svc.autoscaling.maxReplicas }}
  triggers:
    {{- range $consumer.topics }}
    - type: kafka
      metadata:
        {{- if $root.Values.kafka.existingSecret }}
        {{- /* KEDA reads the variable from the Deployment's container, here from the existing Secret. */}}
        bootstrapServersFromEnv: KAFKA_BROKERS
        {{- else }}
        bootstrapServers: {{ $root.Values.kafka.brokers | quote }}
        {{- end }}
        consumerGroup: {{ $consumer.group | quote }}
        topic: {{ . | quote }}
        lagThreshold: {{ $svc.autoscaling.kafkaLag.lagThreshold | quote }}
        {{- /* The services subscribe from the beginning: a group without offsets yet has the whole topic as lag. */}}
        offsetResetPolicy: earliest
    {{- end }}
    - type: cpu
      metricType: Utilization
      metadata:
        value: {{ $svc.autoscaling.targetCPUUtilizationPercentage | quote }}
{{- end }}
{{- /* A budget for a single pod would block every node drain, so one needs at least two pods. */}}
{{- if and $svc.pdb.enabled (gt (int (include "vigil.minReplicas" .)) 1) }}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ $fullname }}
  labels:
    {{- include "vigil.componentLabels" . | nindent 4 }}
spec:
  {{- if hasKey $svc.pdb "minAvailable" }}
  minAvailable: {{ $svc.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $svc.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "vigil.componentSelectorLabels" . | nindent 6 }}
{{- end }}
{{- end -}}
