export * from './param-violation.js';
export * from './dto-binder.js';
export * from './param-plan.js';
