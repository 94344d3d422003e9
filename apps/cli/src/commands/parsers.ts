import { CliError } from '../output';

export function positiveInt(flag: string) {
  return (value: string): number => {
    if (!/^[1-9]\d{0,9}$/.test(value)) throw new CliError(`${flag} must be a positive integer, got ${value}`);
    return Number(value);
  };
}
