export interface Tools {
  helm: string;
  kubeconform: string;
  /** Kubernetes versions the manifests are validated against, e.g. 1.29.0. */
  kubernetesVersions: readonly string[];
  /** Template for `kubeconform -schema-location`. */
  schemaLocation: string;
  versions: Readonly<{ helm: string; kubeconform: string; kubernetesValidate: string; kubernetes: readonly string[] }>;
}
export const VERSIONS: Tools['versions'];
export const TOOLS_DIR: string;
/** Installs what is missing into the cache (minutes on a first run) and returns the tools' paths. */
export function ensureTools(): Promise<Tools>;
