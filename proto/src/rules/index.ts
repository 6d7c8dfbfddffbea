export * from './rules';
export * from './pattern';
export * from './presets';
