export * from './rules';
export * from './presets';
