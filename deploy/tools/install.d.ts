export interface Tools {
  helm: string;
  kubeconform: string;
  /** Kubernetes version the manifests are validated against, e.g. 1.29.0. */
  kubernetesVersion: string;
  /** Template for `kubeconform -schema-location`. */
  schemaLocation: string;
  versions: Readonly<Record<'helm' | 'kubeconform' | 'kubernetesValidate' | 'kubernetes', string>>;
}
export const VERSIONS: Tools['versions'];
export const TOOLS_DIR: string;
/** Installs what is missing into the cache (minutes on a first run) and returns the tools' paths. */
export function ensureTools(): Promise<Tools>;
