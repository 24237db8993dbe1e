export { prepareSessionHome, sessionHome } from './session-home.js';
