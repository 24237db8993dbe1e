export { prepareSessionHome } from './session-home.js';
