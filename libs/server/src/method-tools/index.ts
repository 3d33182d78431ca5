export { methodToolDescription, methodToolParameters } from './method-tool-description.js';
export { drainRows, runMethodTool, type MethodToolRows } from './method-tool-run.js';
