export { COMPONENT_SCHEMA_REF, componentSchemas, type ComponentSchemas } from './component-schemas';
