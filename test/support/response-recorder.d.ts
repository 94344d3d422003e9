/** Installs the response recorder in this process; false when no directory is given. */
export function install(dir?: string): boolean;
export function uninstall(): void;
